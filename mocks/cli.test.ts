import t from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { TapTest } from '../src/lib/tap-test.ts';

const CLI = fileURLToPath(new URL('./cli.ts', import.meta.url));
// A random offset keeps parallel test runs off each other's ports (and off the real 9xxx mock ports).
const offset = () => 20_000 + Math.floor(Math.random() * 20_000);

/** Runs `npm run mock` with arguments; resolves with its output once it says it is ready (or ends). */
function startCli(t: TapTest, args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const ready = new Promise<void>((resolve) => {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line);
        if (line.includes('Prism mocks are ready')) resolve();
      });
    }
    void exited.then(() => resolve());
  });
  return { child, lines, ready, exited };
}

/** Pids of a process's children (Linux `ps`); the Prism servers the CLI started. */
const childPids = (pid: number) => execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).split('\n').map(Number).filter(Boolean);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

t.test('--help lists the interfaces and the role ports', async (t) => {
  const run = startCli(t, ['--help']);
  const [code] = await run.exited;
  t.equal(code, 0);
  t.match(run.lines.join('\n'), /gateway 9080, mapping 9081, device 9100, central 9200, diagnostics 9300, login 9301/);
});

t.test('an unknown interface is refused with the known ones', async (t) => {
  const run = startCli(t, ['maping']);
  const [code] = await run.exited;
  t.equal(code, 2);
  t.match(run.lines.join('\n'), /Unknown interface maping; known: mapping, topology/);
});

t.test('a port offset that leaves the port range is refused', async (t) => {
  const run = startCli(t, ['mapping', '--port-offset', '60000']);
  const [code] = await run.exited;
  t.equal(code, 2);
  t.match(run.lines.join('\n'), /--port-offset must be an integer/);
});

t.test('mocks one spec on its role port + 1000 + offset, and SIGTERM stops Prism and exits 0', async (t) => {
  const shift = offset();
  const run = startCli(t, ['mapping', '--port-offset', String(shift)]);
  await run.ready;
  const port = 8081 + 1000 + shift;
  t.ok(run.lines.includes(`mapping      http://127.0.0.1:${port}  mapping`), `prints the role, URL and specs:\n${run.lines.join('\n')}`);
  const response = await fetch(`http://127.0.0.1:${port}/api/charts`);
  t.equal(response.status, 200);
  t.match(await response.json(), { status: 'success' });
  const prism = childPids(run.child.pid!);
  t.equal(prism.length, 1, 'one Prism child');
  run.child.kill('SIGTERM');
  const [code] = await run.exited;
  t.equal(code, 0);
  t.notOk(alive(prism[0]!), 'the Prism child is gone');
});

t.test('when a Prism child dies, the CLI says so, stops the rest and exits non-zero', async (t) => {
  const run = startCli(t, ['mapping', '--port-offset', String(offset())]);
  await run.ready;
  const [prism] = childPids(run.child.pid!);
  process.kill(prism!, 'SIGKILL');
  const [code] = await run.exited;
  t.equal(code, 1);
  t.match(run.lines.join('\n'), /Prism for mapping exited \(SIGKILL\); stopping the other mocks\./);
});
