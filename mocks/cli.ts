#!/usr/bin/env node
// `npm run mock [-- <interface> ...] [options]` (and `portolan mock`): the Prism mocks of the specs in one
// process, one listener per role on role port + 1000, moved by --port-offset or PORTOLAN_MOCK_PORT_OFFSET.
import { Option } from 'commander';
import { INTERFACES, type InterfaceName } from '../src/lib/spec-catalog.ts';
import { ROLE_NAMES } from '../src/lib/roles.ts';
import { listenFailure } from '../src/app/port-check.ts';
import { portolanCommand, runCommandLine, usageError } from '../src/cli/usage.ts';
import { mockBasePort, mockPortOffset, MOCK_PORT_OFFSET_ENV, resolveMockPorts, type MockOffset } from './mock-ports.ts';
import { parseInterfaceNames, planMocks } from './prism-plan.ts';
import { MockListenError, startPrismMocks, type PrismMocks } from './prism-mocks.ts';

/** Where the command writes (whole lines, each ending in a newline) and what it reads; `signal` stops it like SIGTERM. */
export type MockCommandIo = {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  env: Record<string, string | undefined>;
  signal?: AbortSignal;
};

const DESCRIPTION = `Starts Prism mocks of the chosen specs (all eight by default), all in one process, with one listener per role on the role's port + 1000 (${ROLE_NAMES.map((role) => `${role} ${mockBasePort(role)}`).join(', ')}), answering from the specs' named examples. Prism's own headers work: Prefer: code=404, Prefer: example=<name>, Prefer: dynamic=true.`;

const AFTER_HELP = `
Interfaces: ${INTERFACES.map((i) => i.name).join(', ')}

Settings:
  ${MOCK_PORT_OFFSET_ENV}  the same as --port-offset (the flag wins). The mocks read none of the port
  settings of \`portolan start\` (PORTOLAN_PORT_OFFSET, PORTOLAN_<ROLE>_PORT): both can run side by side.`;

type MockOptions = { dynamic?: boolean; seed?: string; portOffset?: string; host: string; logLevel: 'error' | 'warn' };

/**
 * Runs the mock command: starts the mocks, prints one line per role (role, URL, specs) and waits for
 * SIGINT, SIGTERM or `io.signal`, then stops them. Resolves with 0 once stopped (and after --help); 2 for
 * what a person fixes (a wrong command line or setting, a port out of range or in use, an address not this
 * machine's), as `portolan start` does; 1 for an unexpected failure. Each failure is one line on
 * `io.stderr` (a usage error adds the line pointing at --help).
 *
 * @example
 * process.exitCode = await runMockCommand(['mapping'], { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s), env: process.env });
 */
export async function runMockCommand(argv: string[], io: MockCommandIo): Promise<number> {
  let code = 0;
  const program = portolanCommand('mock', io)
    .description(DESCRIPTION)
    .argument('[interface...]', 'the specs to mock (default: all eight)')
    .option('--dynamic', 'generate answers from the schemas instead of serving the named examples')
    .option('--seed <text>', 'with --dynamic: the same seed gives the same answer to the same request')
    .option('--port-offset <n>', `add n to every mock's port (default 0, or ${MOCK_PORT_OFFSET_ENV}; negative allowed, e.g. -1500)`)
    .option('--host <address>', 'address the role listeners bind', '127.0.0.1')
    .addOption(
      new Option('--log-level <level>', "Prism's log level: error (failed requests, spec violations) or warn")
        .choices(['error', 'warn'])
        .default('error'),
    )
    .addHelpText('after', AFTER_HELP)
    .action(async (names: string[], options: MockOptions) => {
      code = await serve(names, options, io);
    });
  return runCommandLine(program, argv, () => code);
}

/** Starts the mocks of `names` and serves until asked to stop; the exit code. */
async function serve(names: string[], options: MockOptions, io: MockCommandIo): Promise<number> {
  let interfaces: InterfaceName[];
  try {
    interfaces = parseInterfaceNames(names);
  } catch (error) {
    const message = (error as Error).message;
    return usageError('mock', io, message.charAt(0).toLowerCase() + message.slice(1));
  }
  const offset = mockPortOffset(options.portOffset, io.env);
  if (!offset.ok) return usageError('mock', io, offset.error);
  const { dynamic = false, seed, host, logLevel } = options;
  const roles = planMocks(interfaces).roles.map((r) => r.role);
  const ports = resolveMockPorts(roles, offset.value);
  if (!ports.ok) return usageError('mock', io, ports.error);
  let mocks: PrismMocks;
  try {
    mocks = await startPrismMocks({
      interfaces,
      ports: ports.value,
      logLevel,
      host,
      ...(dynamic ? { dynamic: true } : {}),
      ...(seed !== undefined ? { seed } : {}),
      onLog: (name, entry) =>
        (entry.level === 'error' || entry.level === 'fatal' ? io.stderr : io.stdout)(`[${name}] ${entry.level} ${entry.message}\n`),
    });
  } catch (error) {
    if (error instanceof MockListenError) {
      io.stderr(`${listenFailureLine(error, offset.value)}\n`);
      return 2;
    }
    io.stderr(`${(error as Error).message.split('\n')[0]}\n`);
    return 1;
  }
  for (const role of mocks.roles) {
    const own = role.interfaces.filter((name) => !role.viaPool.includes(name));
    const pool = role.viaPool.length > 0 ? ` (+ ${role.viaPool.join(', ')} via the pool)` : '';
    io.stdout(`${role.role.padEnd(12)} ${role.url}  ${own.join(', ')}${pool}\n`);
  }
  io.stdout(`Prism mocks (${dynamic ? 'generated answers' : 'named examples'}) are running in one process. Ctrl-C stops it.\n`);
  const reason = await stopRequested(io.signal);
  io.stdout(`${reason}: stopping the mocks.\n`);
  await mocks.stop();
  io.stdout('Prism mocks stopped.\n');
  return 0;
}

/**
 * The one line for a role listener that cannot bind, in the words of `portolan start`'s (listenFailure), but
 * naming what moves the mocks: --port-offset (or PORTOLAN_MOCK_PORT_OFFSET when that set it), --host for the address.
 *
 * @example listenFailureLine(error, { value: 0, from: 'default' })
 * // "The mapping mock cannot listen on 127.0.0.1:9081: the port is in use. Stop what uses it, or move every mock with --port-offset."
 */
export function listenFailureLine(error: MockListenError, offset: MockOffset): string {
  const fix = offset.from === MOCK_PORT_OFFSET_ENV ? MOCK_PORT_OFFSET_ENV : '--port-offset';
  const where = `${error.host}:${error.port}`;
  if (error.code === 'EADDRINUSE')
    return `The ${error.role} mock cannot listen on ${where}: the port is in use. Stop what uses it, or move every mock with ${fix}.`;
  if (error.code === 'EACCES')
    return `The ${error.role} mock may not listen on ${where} (ports below 1024 need privileges). Change ${fix} so every mock's port is above 1023.`;
  const line = listenFailure(error.role, error.host, error.port, error.code, fix, '--host').message;
  return line.replace(`The ${error.role} role`, `The ${error.role} mock`);
}

/** Resolves with what asked to stop: SIGINT, SIGTERM or the abort signal. Removes its listeners. */
function stopRequested(signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve) => {
    const done = (reason: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      signal?.removeEventListener('abort', onAbort);
      resolve(reason);
    };
    const onInt = () => done('SIGINT');
    const onTerm = () => done('SIGTERM');
    const onAbort = () => done('Stop requested');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

if (import.meta.main) {
  const code = await runMockCommand(process.argv.slice(2), {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    env: process.env,
  });
  process.exit(code);
}
