#!/usr/bin/env node
// `npm run mock [-- <interface> ...] [options]`: Prism mocks of the specs, one listener per role on role port + 1000.
import { parseArgs } from 'node:util';
import { INTERFACES } from '../src/lib/spec-catalog.ts';
import { ROLE_DEFINITIONS } from '../src/lib/roles.ts';
import { MOCK_PORT_SHIFT, parseInterfaceNames } from './prism-plan.ts';
import { startPrismMocks } from './prism-mocks.ts';

const USAGE = `Usage: npm run mock [-- <interface> ...] [options]

Starts a Prism mock server for each chosen spec (all eight by default) and one listener per role on
the role's port + ${MOCK_PORT_SHIFT} (${Object.entries(ROLE_DEFINITIONS).map(([role, d]) => `${role} ${d.defaultPort + MOCK_PORT_SHIFT}`).join(', ')}),
answering from the specs' named examples. Prism's own headers work: Prefer: code=404, Prefer: example=<name>,
Prefer: dynamic=true.

Interfaces: ${INTERFACES.map((i) => i.name).join(', ')}

Options:
  --dynamic            Generate answers from the schemas instead of serving the named examples.
  --seed <text>        With --dynamic: the same seed gives the same answer to the same request.
  --port-offset <n>    Add n to every port (default 0), e.g. for several runs side by side.
  --host <address>     Address the role listeners bind (default 127.0.0.1).
  --log-level <level>  Prism's log level: error (default) or warn (adds request-validation warnings).
  -h, --help           Show this help.
`;

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
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
  fail((error as Error).message);
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
let interfaces;
try {
  interfaces = parseInterfaceNames(positionals);
} catch (error) {
  fail((error as Error).message);
}
const offsetText = values['port-offset'] ?? '0';
const portOffset = Number(offsetText);
const ports = Object.values(ROLE_DEFINITIONS).map((d) => d.defaultPort + MOCK_PORT_SHIFT + portOffset);
if (!/^-?\d+$/.test(offsetText) || Math.min(...ports) < 1 || Math.max(...ports) > 65_535) {
  fail(`--port-offset must be an integer that keeps every port between 1 and 65535, got '${offsetText.slice(0, 20)}'.`);
}
const logLevel = values['log-level'] ?? 'error';
if (logLevel !== 'error' && logLevel !== 'warn') fail(`--log-level must be error or warn, got '${logLevel.slice(0, 20)}'.`);

console.log(`Starting Prism ${values.dynamic ? '(generated answers)' : '(named examples)'} for ${interfaces.join(', ')}...`);
let mocks;
try {
  mocks = await startPrismMocks({
    interfaces,
    portOffset,
    logLevel,
    ...(values.dynamic ? { dynamic: true } : {}),
    ...(values.seed !== undefined ? { seed: values.seed } : {}),
    ...(values.host ? { host: values.host } : {}),
    onOutput: (name, line) => console.log(`[${name}] ${line}`),
  });
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
for (const role of mocks.roles) {
  const own = role.interfaces.filter((name) => !role.viaPool.includes(name));
  const pool = role.viaPool.length > 0 ? ` (+ ${role.viaPool.join(', ')} via the pool)` : '';
  console.log(`${role.role.padEnd(12)} ${role.url}  ${own.join(', ')}${pool}`);
}
console.log('Prism mocks are ready. Ctrl-C stops them.');

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping the mocks.`);
  await mocks.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
void mocks.childExited.then(async ({ interfaceName, code, signal, output }) => {
  if (stopping) return;
  // Ctrl-C in a terminal reaches the whole process group; a child may end before our own handler runs.
  if (signal === 'SIGINT') return stop('SIGINT');
  stopping = true;
  console.error(`Prism for ${interfaceName} exited (${signal ?? `code ${code}`}); stopping the other mocks.`);
  if (output.length > 0) console.error(`Its last output:\n  ${output.slice(-5).join('\n  ')}`);
  await mocks.stop();
  process.exit(1);
});
