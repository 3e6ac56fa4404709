// The memory store keeps its memory bounded: expired entries are swept, and a hard cap holds.
import t from 'tap';
import { createMemoryStore } from './memory-store.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const rule = { limit: 3, windowMs: 10_000 };

t.test('expired entries are swept when new keys arrive', async (t) => {
  const store = createMemoryStore();
  for (let i = 0; i < 100; i++) await store.hit(`old-${i}`, NOW + i, rule);
  t.equal(store.size, 100);
  await store.hit('new', NOW + 10_050, rule);
  t.equal(store.size, 50, 'the 51 windows that ended (old-0 to old-50) are gone; 49 live ones and the new key stay');
  t.same(await store.peek('old-51', NOW + 10_050), { count: 1, expiresAtMs: NOW + 10_051 }, 'a live entry is untouched');
});

t.test('a restarted window keeps the sweep order right', async (t) => {
  const store = createMemoryStore();
  await store.hit('a', NOW, rule);
  await store.hit('b', NOW + 5_000, rule);
  await store.hit('a', NOW + 10_000, rule); // a's window ended: it starts again, now after b
  await store.hit('c', NOW + 15_000, rule); // b's window ended: swept; a is live until NOW + 20 s
  t.equal(await store.peek('b', NOW + 15_000), undefined);
  t.same(await store.peek('a', NOW + 15_000), { count: 1, expiresAtMs: NOW + 20_000 });
  t.equal(store.size, 2, 'a and c');
});

t.test('past maxEntries the oldest window is dropped', async (t) => {
  const store = createMemoryStore({ maxEntries: 3 });
  for (const key of ['a', 'b', 'c', 'd']) await store.hit(key, NOW, rule);
  t.equal(store.size, 3);
  t.equal(await store.peek('a', NOW), undefined, 'the oldest went first');
  t.same(await store.peek('d', NOW), { count: 1, expiresAtMs: NOW + 10_000 });
});
