// Test helper: one `portolan start` (or HAProxy) as a child process of its own process group, which a test can
// kill with SIGKILL and start again. Each child is wrapped in `sh`, which waits on the test process's pipe: when
// the test process dies without its teardown (a crash, a timeout), the pipe closes and the wrapper kills the
// child, so nothing is left behind.
import { type ChildProcess, spawn } from 'node:child_process';

/**
 * The wrapper: starts "$@", and beside it a watchdog that reads the wrapper's stdin (the test process's pipe)
 * and kills the group ("$@" and its children) once it closes; exits with the status of "$@". (A background list reads /dev/null unless
 * redirected: the pipe is passed on as descriptor 3.)
 */
const WATCHDOG = 'exec 3<&0; "$@" </dev/null & child=$!; { cat >/dev/null; kill -9 0; } <&3 & exec 3<&-; wait "$child"';

/** The last bytes a child wrote (stdout and stderr): shown when it fails to start or the test fails. */
const TAIL_BYTES = 8192;

export type ManagedProcess = {
  readonly name: string;
  /** Whether the current run of the child is alive. */
  alive(): boolean;
  /** The child's last output, for messages. */
  output(): string;
  /** Starts the child (again): the same command and environment. */
  start(): void;
  /** SIGKILL to the whole group (wrapper and child); resolves once the wrapper is gone. */
  kill(): Promise<void>;
  /** Resolves with the exit code of the current run (null when killed). */
  exited(): Promise<number | null>;
};

/**
 * A child process that can be killed and started again under the same name.
 *
 * @example
 * const mapping = managedProcess('mapping1', process.execPath, ['src/cli/main.ts', 'start'], env);
 * mapping.start();
 * await mapping.kill();
 */
export function managedProcess(
  name: string,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  /** Every line the child writes (stdout and stderr), as it comes. */
  onLine?: (line: string) => void,
): ManagedProcess {
  let child: ChildProcess | undefined;
  let exit: Promise<number | null> = Promise.resolve(null);
  let tail = '';
  /** Keeps the tail, and passes each whole line of one stream on. */
  const reader = () => {
    let partial = '';
    return (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-TAIL_BYTES);
      if (!onLine) return;
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      for (const line of lines) onLine(line);
    };
  };
  return {
    name,
    alive: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    output: () => tail,
    start() {
      // A watchdog left from a run that ended by itself goes with its group.
      if (child?.pid) killGroup(child.pid);
      tail = '';
      const started = spawn('sh', ['-c', WATCHDOG, 'sh', command, ...args], {
        env,
        detached: true, // a process group of its own: kill() reaches the wrapper and the child together
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      started.stdout!.on('data', reader());
      started.stderr!.on('data', reader());
      started.stdin!.on('error', () => undefined);
      exit = new Promise((resolve) => started.once('exit', (code) => resolve(code)));
      child = started;
    },
    async kill() {
      const current = child;
      if (!current?.pid) return;
      killGroup(current.pid);
      await exit;
    },
    exited: () => exit,
  };
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
}
