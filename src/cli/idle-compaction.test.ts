import t from 'tap';
import { getHeapSpaceStatistics } from 'node:v8';
import { createFakeClock } from '../lib/clock.ts';
import { compactWhenIdle, memoryReducingCollection } from './idle-compaction.ts';

/** A utilization source answering the given values in turn (the first call, at the start, answers 1). */
function utilizations(...values: number[]) {
  const queue = [1, ...values];
  return () => queue.shift() ?? 1;
}

t.test('collects once, at the first look that finds the event loop idle', async (t) => {
  const clock = createFakeClock();
  let collections = 0;
  compactWhenIdle({ timers: clock, utilization: utilizations(0.6, 0.3, 0.01, 0), collect: () => collections++, everyMs: 200 });
  await clock.advanceAsync(199);
  t.equal(collections, 0, 'nothing before the first look');
  await clock.advanceAsync(1);
  t.equal(collections, 0, 'busy at the first look');
  await clock.advanceAsync(200);
  t.equal(collections, 0, 'busy at the second');
  await clock.advanceAsync(200);
  t.equal(collections, 1, 'idle at the third: collected');
  await clock.advanceAsync(10_000);
  t.equal(collections, 1, 'and never again');
});

t.test('a utilization at the threshold counts as idle; above it as busy', async (t) => {
  const clock = createFakeClock();
  let collections = 0;
  compactWhenIdle({ timers: clock, utilization: utilizations(0.051, 0.05), collect: () => collections++, idleAtMost: 0.05 });
  await clock.advanceAsync(200);
  t.equal(collections, 0);
  await clock.advanceAsync(200);
  t.equal(collections, 1);
});

t.test('gives up after its tries when the loop stays busy', async (t) => {
  const clock = createFakeClock();
  let looks = 0;
  let collections = 0;
  compactWhenIdle({
    timers: clock,
    utilization: () => (looks++, 0.9),
    collect: () => collections++,
    tries: 3,
  });
  await clock.advanceAsync(60_000);
  t.equal(collections, 0);
  t.equal(looks, 1 + 3, 'the reading at the start, then three looks');
});

t.test('a collection that throws stays inside: the process goes on', async (t) => {
  const clock = createFakeClock();
  let tried = 0;
  compactWhenIdle({
    timers: clock,
    utilization: utilizations(0),
    collect: () => {
      tried++;
      throw new Error('no collector here');
    },
  });
  await clock.advanceAsync(200);
  t.equal(tried, 1);
});

t.test('a cancel before the idle look stops it', async (t) => {
  const clock = createFakeClock();
  let collections = 0;
  const cancel = compactWhenIdle({ timers: clock, utilization: utilizations(0.9, 0), collect: () => collections++ });
  await clock.advanceAsync(200);
  cancel();
  await clock.advanceAsync(10_000);
  t.equal(collections, 0);
});

t.test("the collection shrinks V8's young generation back, and leaves no gc behind", async (t) => {
  const youngGeneration = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_size;
  // Objects that survive scavenges make V8 grow its young generation.
  const kept: unknown[] = [];
  for (let round = 0; round < 40 && youngGeneration() < 8 * 1024 * 1024; round++)
    for (let i = 0; i < 50_000; i++) kept.push({ round, i, text: `${round}:${i}` });
  const grown = youngGeneration();
  t.ok(grown >= 8 * 1024 * 1024, `grown to ${(grown / 1048576).toFixed(0)} MB`);
  kept.length = 0;
  memoryReducingCollection();
  t.ok(youngGeneration() < grown / 2, `shrunk to ${(youngGeneration() / 1048576).toFixed(0)} MB`);
  t.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined', 'no global gc');
});
