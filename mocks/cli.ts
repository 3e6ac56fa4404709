#!/usr/bin/env node
// `npm run mock [-- <interface> ...] [options]` (and `portolan mock`): the Prism mocks of the specs in one
// process, one listener per role on role port + 1000 (+ --port-offset), or on PORTOLAN_<ROLE>_PORT.
import { parseArgs } from 'node:util';
import { INTERFACES, type InterfaceName } from '../src/lib/spec-catalog.ts';
import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from '../src/lib/roles.ts';
import { listenFailure } from '../src/app/port-check.ts';
import { portSettingOf, resolveMockPorts, type MockPort } from './mock-ports.ts';
import { MOCK_PORT_SHIFT, parseInterfaceNames, planMocks } from './prism-plan.ts';
import { MockListenError, startPrismMocks, type PrismMocks } from './prism-mocks.ts';

/** Where the command writes (whole lines, each ending in a newline) and what it reads; `signal` stops it like SIGTERM. */
export type MockCommandIo = {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  env: Record<string, string | undefined>;
  signal?: AbortSignal;
};

const USAGE = `Usage: npm run mock [-- <interface> ...] [options]   (portolan mock [<interface> ...] [options])

Starts Prism mocks of the chosen specs (all eight by default), all in one process, with one listener per
role on the role's port + ${MOCK_PORT_SHIFT} (${ROLE_NAMES.map((role) => `${role} ${ROLE_DEFINITIONS[role].defaultPort + MOCK_PORT_SHIFT}`).join(', ')}),
answering from the specs' named examples. Prism's own headers work: Prefer: code=404, Prefer: example=<name>,
Prefer: dynamic=true.

Interfaces: ${INTERFACES.map((i) => i.name).join(', ')}

Options:
  --dynamic            Generate answers from the schemas instead of serving the named examples.
  --seed <text>        With --dynamic: the same seed gives the same answer to the same request.
  --port-offset <n>    Add n to every role's port (default 0; negative allowed, e.g. --port-offset -1500).
  --host <address>     Address the role listeners bind (default 127.0.0.1).
  --log-level <level>  Prism's log level: error (default: failed requests, spec violations) or warn.
  -h, --help           Show this help.

Settings: ${ROLE_NAMES.map(portSettingOf).join(', ')}
  set one role's port (the settings of \`portolan start\`; 0 picks a free port); a setting wins over --port-offset.
`;

type MockArgs = {
  interfaces: InterfaceName[];
  offset: number;
  dynamic: boolean;
  seed?: string;
  host: string;
  logLevel: 'error' | 'warn';
  help: boolean;
};

/** `--port-offset -1500` as one token, so the negative number is not read as an option. */
function joinNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--port-offset' && /^-\d+$/.test(argv[i + 1] ?? '')) out.push(`--port-offset=${argv[++i]}`);
    else out.push(argv[i]!);
  }
  return out;
}

/** The command line, or the one line that says what is wrong with it. */
function parseMockArgs(argv: readonly string[]): { ok: true; value: MockArgs } | { ok: false; error: string } {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(argv),
      allowPositionals: true,
      options: {
        dynamic: { type: 'boolean' },
        seed: { type: 'string' },
        'port-offset': { type: 'string' },
        host: { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return { ok: false, error: (error as Error).message.split('\n')[0]! };
  }
  const { values, positionals } = parsed;
  const base = {
    offset: 0,
    dynamic: values.dynamic ?? false,
    host: values.host ?? '127.0.0.1',
    logLevel: 'error' as const,
    help: values.help ?? false,
  };
  if (base.help) return { ok: true, value: { ...base, interfaces: [] } };
  let interfaces: InterfaceName[];
  try {
    interfaces = parseInterfaceNames(positionals);
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
  const offsetText = values['port-offset'] ?? '0';
  if (!/^[+-]?\d{1,6}$/.test(offsetText))
    return { ok: false, error: `--port-offset must be an integer (e.g. 100 or -1500), got '${offsetText.slice(0, 20)}'.` };
  const logLevel = values['log-level'] ?? 'error';
  if (logLevel !== 'error' && logLevel !== 'warn')
    return { ok: false, error: `--log-level must be error or warn, got '${logLevel.slice(0, 20)}'.` };
  return {
    ok: true,
    value: { ...base, interfaces, offset: Number(offsetText), logLevel, ...(values.seed !== undefined ? { seed: values.seed } : {}) },
  };
}

/**
 * Runs the mock command: starts the mocks, prints one line per role (role, URL, specs) and waits for
 * SIGINT, SIGTERM or `io.signal`, then stops them. Resolves with 0 once stopped; 2 for what a person fixes
 * (a wrong command line or setting, a port out of range or in use, an address not this machine's), as
 * `portolan start` does; 1 for an unexpected failure. Each failure is one line on `io.stderr`.
 *
 * @example
 * process.exitCode = await runMockCommand(['mapping'], { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s), env: process.env });
 */
export async function runMockCommand(argv: string[], io: MockCommandIo): Promise<number> {
  const args = parseMockArgs(argv);
  if (!args.ok) {
    io.stderr(`${args.error} (--help lists the options)\n`);
    return 2;
  }
  if (args.value.help) {
    io.stdout(USAGE);
    return 0;
  }
  const { interfaces, offset, dynamic, seed, host, logLevel } = args.value;
  const roles = planMocks(interfaces).roles.map((r) => r.role);
  const ports = resolveMockPorts(roles, offset, io.env);
  if (!ports.ok) {
    io.stderr(`${ports.error}\n`);
    return 2;
  }
  let mocks: PrismMocks;
  try {
    mocks = await startPrismMocks({
      interfaces,
      ports: Object.fromEntries(roles.map((role) => [role, ports.value[role].port])) as Record<RoleName, number>,
      logLevel,
      host,
      ...(dynamic ? { dynamic: true } : {}),
      ...(seed !== undefined ? { seed } : {}),
      onLog: (name, entry) =>
        (entry.level === 'error' || entry.level === 'fatal' ? io.stderr : io.stdout)(`[${name}] ${entry.level} ${entry.message}\n`),
    });
  } catch (error) {
    if (error instanceof MockListenError) {
      io.stderr(`${listenFailureLine(error, ports.value[error.role])}\n`);
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
 * The one line for a role listener that cannot bind: `portolan start`'s (listenFailure), naming the role's
 * port setting, --host for the address, and --port-offset too when the offset chose the port.
 */
export function listenFailureLine(error: MockListenError, choice: MockPort): string {
  const line = listenFailure(error.role, error.host, error.port, error.code, choice.setting, '--host').message;
  return choice.from === 'offset' && line.includes(choice.setting) ? `${line} Or change --port-offset (it moves every role).` : line;
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
