// `portolan haproxy-config`: writes the HAProxy configuration for roles that run on several machines (or
// several processes) against one PostgreSQL and one Redis: a frontend per role at the role's port, a backend
// per role with its processes, each checked at /health (haproxy-config.ts writes the text).
import { writeFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { CORE_SETTINGS, ConfigError, decodeSettings, type CoreConfig, type Setting } from '../lib/config.ts';
import { ROLE_NAMES, type RoleName } from '../lib/roles.ts';
import { REGISTRATION_SETTINGS } from '../interfaces/client-registration/settings.ts';
import { DEVICE_CHECK_AUTH_ENV, haproxyConfig, layoutProblems, type DeviceCheck, type HostPort } from './haproxy-config.ts';
import { responseHeaderNames } from './haproxy-header-names.ts';
import { portolanCommand, runCommandLine, usageError, type TextOut } from './usage.ts';

const NAME = 'haproxy-config';

/** The settings that place the roles (their ports are the frontends' and, with --hosts, the servers'). */
const PLACEMENT: readonly Setting[] = [
  ...CORE_SETTINGS.filter((s) => s.key === 'portOffset' || s.key.startsWith('ports.')),
  ...REGISTRATION_SETTINGS.filter((s) => s.key === 'registrationPath'),
];

const HELP_AFTER = `
Each role's frontend listens on the role's port (8080 gateway, 8081 mapping, 8100 device, 8200 central,
8300 diagnostics, 8301 login; moved by PORTOLAN_PORT_OFFSET and PORTOLAN_<ROLE>_PORT as for portolan start),
and balances the role's processes round robin, each checked with GET /health (200: in rotation). Client
registration answers close the connection, at PORTOLAN_REGISTRATION_PATH as the gateway reads it.

Servers:
  --hosts 10.0.0.5,10.0.0.6          every role on each of these machines, at the role's port
  --server mapping=10.0.0.7:9081     one process of one role (repeatable; adds to --hosts)

The device: --device-check health balances the device processes like every other role (the default);
--device-check failover-status sends requests only to the device whose GET ${'/mgmt/tm/cm/failover-status'}
says ACTIVE (an active/standby pair). That check logs in: HAProxy reads base64 of user:password from its
environment variable ${DEVICE_CHECK_AUTH_ENV}, so no password is written in the file.

Examples:
  portolan haproxy-config --hosts 10.0.0.5,10.0.0.6 -o /etc/haproxy/haproxy.cfg
  portolan haproxy-config --roles gateway,mapping --server gateway=10.0.0.5:8080 --server mapping=10.0.0.5:8081 \\
    --server mapping=10.0.0.6:8081
`;

type Options = {
  hosts?: string[];
  server?: [RoleName, HostPort][];
  roles?: RoleName[];
  bind: string;
  deviceCheck: DeviceCheck;
  stats?: HostPort;
  output?: string;
};

/** `10.0.0.5:8081`, `[fe80::1]:8081` or `host.example:8081`. */
function hostPort(text: string): HostPort {
  const match = /^(\[[^\]]+\]|[^:[\]\s]+):(\d{1,5})$/.exec(text);
  if (!match) throw new InvalidArgumentError(`expected host:port, got '${text.slice(0, 80)}'.`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]) };
}

const roleList = (value: string): RoleName[] => {
  const names = value.split(',').map((n) => n.trim());
  const unknown = names.filter((n) => !ROLE_NAMES.includes(n as RoleName));
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      `unknown role ${unknown.map((n) => `'${n.slice(0, 40)}'`).join(', ')}; known: ${ROLE_NAMES.join(', ')}.`,
    );
  return names as RoleName[];
};

const hostList = (value: string, previous: string[] | undefined) => {
  const hosts = value.split(',').map((h) => h.trim().replace(/^\[|\]$/g, ''));
  if (hosts.some((h) => h === '' || /[\s/]/.test(h))) throw new InvalidArgumentError('expected a comma list of host names or addresses.');
  return [...(previous ?? []), ...hosts];
};

const serverOf = (value: string, previous: [RoleName, HostPort][] | undefined): [RoleName, HostPort][] => {
  const eq = value.indexOf('=');
  if (eq < 1) throw new InvalidArgumentError('expected role=host:port.');
  const [role] = roleList(value.slice(0, eq));
  return [...(previous ?? []), [role!, hostPort(value.slice(eq + 1))]];
};

const deviceCheckOf = (value: string): DeviceCheck => {
  if (value !== 'health' && value !== 'failover-status') throw new InvalidArgumentError("expected 'health' or 'failover-status'.");
  return value;
};

/**
 * Runs `portolan haproxy-config <args>`; resolves to the exit code. The role ports come from `io.env`.
 *
 * @example
 * process.exitCode = await runHaproxyConfigCommand(['--hosts', '10.0.0.5,10.0.0.6'], { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t), env: process.env });
 */
export async function runHaproxyConfigCommand(args: readonly string[], io: TextOut & { env: NodeJS.ProcessEnv }): Promise<number> {
  let code = 0;
  const program = portolanCommand(NAME, io)
    .description(
      'Write the HAProxy configuration for roles running on several machines against one PostgreSQL and one Redis: a frontend per role, its processes checked at /health.',
    )
    .option('--hosts <hosts>', 'machines that run every role (comma list)', hostList)
    .option('--server <role=host:port>', 'one process of a role (repeatable)', serverOf)
    .option('--roles <roles>', 'only these roles (comma list; default: every role that has a server)', roleList)
    .option('--bind <address>', "address the frontends listen on ('*': every address)", '*')
    .option(
      '--device-check <check>',
      'health, or failover-status for an active/standby device pair',
      deviceCheckOf,
      'health' as DeviceCheck,
    )
    .option('--stats <host:port>', "serve HAProxy's statistics page here (read-only; add /;csv for scripts)", (v: string) => hostPort(v))
    .option('-o, --output <file>', 'write the configuration here (default: standard output)')
    .addHelpText('after', HELP_AFTER)
    .action((options: Options) => {
      code = write(options, io);
    });
  return runCommandLine(program, args, () => code);
}

function write(options: Options, io: TextOut & { env: NodeJS.ProcessEnv }): number {
  let ports: Record<RoleName, number>;
  let registrationPath: string;
  try {
    ({ ports, registrationPath } = decodeSettings<CoreConfig & { registrationPath: string }>(PLACEMENT, io.env, {}, { partial: true }));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return usageError(NAME, io, error.problems.join('; '));
  }
  const servers = new Map<RoleName, HostPort[]>();
  for (const role of ROLE_NAMES)
    for (const host of options.hosts ?? []) servers.set(role, [...(servers.get(role) ?? []), { host, port: ports[role] }]);
  for (const [role, where] of options.server ?? []) servers.set(role, [...(servers.get(role) ?? []), where]);
  const roles = options.roles ?? ROLE_NAMES.filter((role) => servers.has(role));
  if (roles.length === 0) return usageError(NAME, io, 'name the machines (--hosts) or the processes (--server) to balance');
  const zero = roles.filter((role) => ports[role] === 0);
  if (zero.length > 0) return usageError(NAME, io, `a frontend needs a port: the ${zero.join(', ')} port is 0`);
  const layout = {
    roles: roles.map((role) => ({ role, bind: { host: options.bind, port: ports[role] }, servers: servers.get(role) ?? [] })),
    deviceCheck: options.deviceCheck,
    registrationPath,
    headerNames: responseHeaderNames(),
    ...(options.stats ? { stats: options.stats } : {}),
  };
  const problems = layoutProblems(layout);
  if (problems.length > 0) return usageError(NAME, io, problems.join('; '));
  const text = haproxyConfig(layout);
  if (!options.output) {
    io.stdout(text);
    return 0;
  }
  try {
    writeFileSync(options.output, text);
  } catch (error) {
    io.stderr(`portolan ${NAME}: cannot write ${options.output} (${(error as NodeJS.ErrnoException).code ?? 'error'})\n`);
    return 1;
  }
  io.stderr(`Wrote ${options.output}: check it with haproxy -c -f ${options.output}\n`);
  return 0;
}
