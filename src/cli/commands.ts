// The `portolan` command's work (src/cli/main.ts loads it once the compile cache is on).
import { parseArgs } from 'node:util';
import { CONFIG_FILE_ENV, ConfigError } from '../lib/config.ts';
import { loadConfig, SETTINGS } from '../app/config.ts';
import { createLogger } from '../lib/logger.ts';
import { systemClock } from '../lib/clock.ts';
import { ROLE_DEFINITIONS } from '../lib/roles.ts';
import { startSystem } from '../app/system.ts';
import { runUsersCommand } from './users.ts';
import { runSnapshotCommand } from './snapshot.ts';
import { StaleContractError } from '../server/compiled-contract.ts';

const USAGE = `Usage: portolan <command> [options]

Commands:
  start     Start every role of the reference system (gateway, mapping, device, central,
            diagnostics, login), each on its own port.
  users     Manage users: users add|passwd|remove|list [--profile <name>] <username>
            (portolan users --help).
  snapshot  Client of the snapshot diagnostics API: snapshot upload|wait|hits|report|list|delete|
            delete-all (portolan snapshot --help).

Options:
  -h, --help  Show this help.

Settings: environment variables, or the same keys in a JSON file named by ${CONFIG_FILE_ENV}
(nested keys as objects, e.g. {"ports": {"mapping": 9081}}); the environment wins.
${SETTINGS.map((s) => `  ${s.env.padEnd(34)} ${s.key.padEnd(22)} ${s.description} (default: ${String(s.default)})`).join('\n')}
`;

async function start() {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel });
  const system = await startSystem(config, { logger, clock: systemClock });
  for (const { role, url } of system.roles) {
    console.log(`${role.padEnd(12)} ${url}  (${ROLE_DEFINITIONS[role].seed})`);
  }
  console.log('Portolan is running. Ctrl-C stops it.');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    const limit = config.shutdownDrainMs + config.shutdownTimeoutMs + 5_000;
    const timer = setTimeout(() => {
      logger.error({ limitMs: limit }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, limit);
    timer.unref();
    await system.stop({ drainMs: config.shutdownDrainMs, timeoutMs: config.shutdownTimeoutMs });
    console.log('Portolan stopped.');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

// `users` and `snapshot` parse their own options, so their arguments skip the top-level parser.
const { values, positionals } = process.argv[2] === 'users' || process.argv[2] === 'snapshot'
  ? { values: { help: false }, positionals: [process.argv[2]] }
  : parseArgs({ allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
const command = positionals[0];
try {
  if (values.help || !command) {
    console.log(USAGE);
  } else if (command === 'start') {
    await start();
  } else if (command === 'users') {
    process.exitCode = await runUsersCommand(process.argv.slice(3), { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
  } else if (command === 'snapshot') {
    process.exitCode = await runSnapshotCommand(process.argv.slice(3), { env: process.env, stdout: process.stdout, stderr: process.stderr });
  } else {
    console.error(`Unknown command '${command}'.\n\n${USAGE}`);
    process.exitCode = 2;
  }
} catch (error) {
  if (error instanceof ConfigError || error instanceof StaleContractError) {
    console.error(error.message);
    process.exitCode = 2;
  } else {
    throw error;
  }
}
