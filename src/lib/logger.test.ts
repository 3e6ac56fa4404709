// The process logger writes JSON lines to stdout asynchronously; nothing logged before an exit is lost.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const fixture = fileURLToPath(new URL('./fixtures/log-then-exit.ts', import.meta.url));

t.test('every line logged before process.exit reaches stdout, in order, the error line last', async (t) => {
  const lines = 20_000;
  const child = spawnSync(process.execPath, [fixture], {
    env: { ...process.env, LINES: String(lines) },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  t.equal(child.status, 3, 'the exit code the process chose');
  const records = child.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { msg: string; requestId?: string; level: number });
  t.equal(records.length, lines + 1, 'every line written');
  t.same(
    records.slice(0, 3).map((record) => record.requestId),
    ['r0', 'r1', 'r2'],
    'in the order logged',
  );
  t.equal(records.at(-2)?.requestId, `r${lines - 1}`);
  t.match(records.at(-1), { msg: 'cannot go on', level: 50 }, 'the error line is last');
});
