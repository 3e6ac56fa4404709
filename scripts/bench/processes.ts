// The benchmarks' child processes: each configuration runs in a process of its own, started here and
// stopped (and waited for) at the end, so a profiled child has written its profile before we return.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export type StartOptions = {
  /** Node options before the script, e.g. `--cpu-prof`. */
  nodeArgs?: readonly string[];
  /** `portolan` only: arguments after `start`, e.g. `--workers 2`. */
  startArgs?: readonly string[];
};

export type Children = {
  /** Starts `node <args>` in the repository root and resolves with the first match of `pattern` (its group 1) on stdout. */
  start(args: readonly string[], env: Record<string, string>, pattern: RegExp, options?: StartOptions): Promise<string>;
  /** Starts `portolan start` with `roles` and resolves with the URL it prints for `role`. */
  portolan(roles: string, env: Record<string, string>, role: string, options?: StartOptions): Promise<string>;
  /** The process id of the child whose ready match was `ready` (what `start` or `portolan` resolved with). */
  pidOf(ready: string): number;
  /** SIGTERM to every child, then waits for each to exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
};

/**
 * @example
 * const children = childProcesses();
 * try { const url = await children.portolan('mapping', { PORTOLAN_MAPPING_PORT: '0' }, 'mapping'); }
 * finally { await children.stop(); }
 */
export function childProcesses(): Children {
  const running: ChildProcess[] = [];
  const pids = new Map<string, number>();
  const start: Children['start'] = (args, env, pattern, options = {}) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...args], {
      cwd: root,
      env: { ...process.env, PORTOLAN_LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    running.push(child);
    // Keeps reading after the match, so a child that prints more never blocks on a full pipe.
    return new Promise((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        const match = pattern.exec(line);
        if (!match) return;
        pids.set(match[1]!, child.pid!);
        resolve(match[1]!);
        // From here on its output (log lines at info) is read and dropped, as a log collector would take it, without splitting lines.
        lines.removeAllListeners();
        lines.close();
        child.stdout!.resume();
      });
      lines.on('close', () => reject(new Error(`${args.join(' ')} exited before it was ready`)));
    });
  };
  return {
    start,
    pidOf(ready) {
      const pid = pids.get(ready);
      if (pid === undefined) throw new Error(`no child became ready as ${ready}`);
      return pid;
    },
    portolan: (roles, env, role, options) =>
      start(
        ['src/cli/main.ts', 'start', ...(options?.startArgs ?? [])],
        { PORTOLAN_ROLES: roles, PORTOLAN_ADMIN_PASSWORD: 'bench-admin', PORTOLAN_SHUTDOWN_DRAIN_MS: '0', ...env },
        new RegExp(`^${role}\\s+(http://\\S+)`),
        options,
      ),
    async stop(graceMs = 15_000) {
      await Promise.all(
        running.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
              child.once('exit', () => {
                clearTimeout(timer);
                resolve();
              });
              child.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
