// The old, out-of-process way to run Prism, kept only as the "before" of `npm run bench:mocks`
// (scripts/bench/mocks.ts): one `prism mock` CLI process per spec (@stoplight/prism-cli), as the old
// `npm run mock` launched them. `npm run mock` runs Prism in-process (mocks/prism-server.ts). Its readiness
// probe makes Prism log one NO_PATH_MATCHED_ERROR.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { get } from 'node:http';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { specPath, type InterfaceName } from '../../src/lib/spec-catalog.ts';

const require = createRequire(import.meta.url);

/** Prism's CLI script, run with this process's own Node (the project's Node 24), not whatever `node` is on PATH. */
export function prismCliPath(): string {
  const manifest = require.resolve('@stoplight/prism-cli/package.json');
  const { bin } = require(manifest) as { bin: { prism: string } };
  return join(dirname(manifest), bin.prism);
}

export type PrismOptions = {
  interfaceName: InterfaceName;
  /** Internal port the child listens on (loopback only: the role fronts are the public face). */
  port: number;
  /** Generate bodies from the schemas instead of serving the named examples. */
  dynamic?: boolean;
  /** Dynamic mode: the same seed gives the same generated answer to the same request. */
  seed?: string;
  /** Prism's own log level; `warn` keeps request-validation warnings, `error` only failures. */
  logLevel?: 'error' | 'warn';
  /** Each line Prism writes (stdout and stderr). */
  onOutput?: (line: string) => void;
};

export type PrismChild = {
  interfaceName: InterfaceName;
  port: number;
  process: ChildProcess;
  /** Settles when the child ends, for whatever reason. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines Prism wrote, for error messages when it dies. */
  recentOutput(): string[];
  /** SIGTERM, then SIGKILL if it has not ended after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
};

/** Starts one Prism mock server for one spec. Resolves at once; use `waitUntilListening` for readiness. */
export function startPrism(options: PrismOptions): PrismChild {
  const args = [
    prismCliPath(),
    'mock',
    specPath(options.interfaceName),
    '--port',
    String(options.port),
    '--host',
    '127.0.0.1',
    '--verboseLevel',
    options.logLevel ?? 'warn',
  ];
  if (options.dynamic) args.push('--dynamic');
  if (options.seed !== undefined) args.push('--seed', options.seed);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const recent: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      recent.push(line);
      if (recent.length > 20) recent.shift();
      options.onOutput?.(line);
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A spawn failure emits 'error' and may never emit 'exit'.
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  return {
    interfaceName: options.interfaceName,
    port: options.port,
    process: child,
    exited,
    recentOutput: () => [...recent],
    async stop(graceMs = 3000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Polls the child's port until a Prism answers there; fails if the child exits first (a port taken
 * meanwhile by another program makes Prism exit) or time runs out.
 */
export async function waitUntilListening(child: PrismChild, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let ended = false;
  void child.exited.then(() => (ended = true));
  while (!ended) {
    if (await prismAnswers(child.port)) return;
    if (Date.now() > deadline)
      throw new Error(`Prism for ${child.interfaceName} did not listen on port ${child.port} within ${timeoutMs} ms.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const { code, signal } = await child.exited;
  const output = child.recentOutput().slice(-5).join('\n  ');
  throw new Error(
    `Prism for ${child.interfaceName} exited before listening (${signal ?? `code ${code}`})${output ? `:\n  ${output}` : '.'}`,
  );
}

/** Prism answers an unknown path with its own problem type; anything else on the port is not it. */
function prismAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/__portolan_mock_probe', timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(res.statusCode === 404 && body.includes('stoplight.io/prism/errors#NO_PATH_MATCHED_ERROR')));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}
