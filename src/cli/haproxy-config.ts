// The HAProxy configuration `portolan haproxy-config` writes: for the layout where the roles run on several
// machines (or several processes) against one PostgreSQL and one Redis, one frontend per role at the role's
// public port and one backend per role balancing its processes, each checked at its `/health` (interface G:
// 200 is up). Pure: a layout in, the configuration's text out (docs/deploy/haproxy.md explains each part).
import { ROLE_NAMES, type RoleName } from '../lib/roles.ts';

/** An address HAProxy connects to or listens on. */
export type HostPort = { host: string; port: number };

/**
 * How the device backend tells which device gets the traffic:
 * - `health`: every device process whose `/health` is 200 gets requests, like every other role;
 * - `failover-status`: reads (GET, HEAD) go to every device process, writes only to the one whose
 *   `GET /mgmt/tm/cm/failover-status` says `ACTIVE` (the real product's active/standby pair); the check's
 *   credentials come from HAProxy's environment (`PORTOLAN_HAPROXY_DEVICE_AUTH`: base64 of `user:password`),
 *   never from the file.
 */
export type DeviceCheck = 'health' | 'failover-status';

export type HaproxyLayout = {
  /** The roles to balance, each with where its frontend listens and its processes (at least one). */
  roles: readonly { role: RoleName; bind: HostPort; servers: readonly HostPort[] }[];
  deviceCheck?: DeviceCheck;
  /** Time between two checks of one process, in ms (default 2000); 2 failures take it out, 2 successes back. */
  checkIntervalMs?: number;
  /**
   * The gateway's client-registration path (PORTOLAN_REGISTRATION_PATH; default
   * `/vendor-oauth2/v1/client-register`): its answers close the connection (`Connection: close`, interface D),
   * through HAProxy too.
   */
  registrationPath?: string;
  /**
   * Header names to write as spelled here rather than in lower case, HAProxy's way (`h1-case-adjust`): the
   * names the roles write (haproxy-header-names.ts); none when absent.
   */
  headerNames?: readonly string[];
  /** Where HAProxy's statistics page listens (read-only; `<url>/;csv` for scripts); none when absent. */
  stats?: HostPort;
};

/** The environment variable HAProxy reads the device check's credentials from (base64 of `user:password`). */
export const DEVICE_CHECK_AUTH_ENV = 'PORTOLAN_HAPROXY_DEVICE_AUTH';

/** The line HAProxy's httpchk sends on the device's failover check, and what the active device answers. */
const FAILOVER_STATUS_PATH = '/mgmt/tm/cm/failover-status';
// The real product's answer nests `"status": {"description": "ACTIVE"}` (a standby says STANDBY there; the
// other descriptions are lower case). Single quotes: HAProxy takes the pattern as written.
const ACTIVE_PATTERN = `'"description"[[:space:]]*:[[:space:]]*"ACTIVE"'`;

/**
 * A `host:port` as HAProxy reads it: IPv6 addresses in brackets; `*` (every address) as is.
 *
 * @example address({ host: '::1', port: 8080 }) // '[::1]:8080'
 */
export function address({ host, port }: HostPort): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return `${bare.includes(':') ? `[${bare}]` : bare}:${port}`;
}

const DEFAULT_REGISTRATION_PATH = '/vendor-oauth2/v1/client-register';

/** A value as one HAProxy word: in single quotes (taken as written), which it cannot hold itself. */
const haproxyWord = (value: string) => `'${value}'`;

/** Every role's check: its /health answers 200. */
const HEALTH_CHECK = ['    http-check send meth GET uri /health ver HTTP/1.1 hdr Host localhost', '    http-check expect status 200'];

/** The device pair's: the failover status says ACTIVE (the standby says STANDBY there). */
const ACTIVE_CHECK = [
  `    http-check send meth GET uri ${FAILOVER_STATUS_PATH} ver HTTP/1.1 hdr Host localhost hdr Authorization "Basic \${${DEVICE_CHECK_AUTH_ENV}}"`,
  '    http-check expect status 200',
  `    http-check expect rstring ${ACTIVE_PATTERN}`,
];

/** Why a layout cannot be written (one line each), or nothing. */
export function layoutProblems(layout: HaproxyLayout): string[] {
  const problems: string[] = [];
  if (layout.roles.length === 0) problems.push('no role to balance');
  const seen = new Map<string, RoleName>();
  for (const { role, bind, servers } of layout.roles) {
    if (!ROLE_NAMES.includes(role)) problems.push(`unknown role '${role}'; known: ${ROLE_NAMES.join(', ')}`);
    if (servers.length === 0) problems.push(`the ${role} role has no server`);
    for (const where of [bind, ...servers])
      if (!Number.isInteger(where.port) || where.port < 1 || where.port > 65535)
        problems.push(`the ${role} role: port ${where.port} of ${where.host} is outside 1..65535`);
    const key = address(bind);
    if (layout.stats && address(layout.stats) === key) problems.push(`the ${role} frontend and the statistics page both listen on ${key}`);
    const other = seen.get(key);
    if (other) problems.push(`the ${other} and ${role} frontends both listen on ${key}`);
    seen.set(key, role);
  }
  if (layout.registrationPath !== undefined && !/^\/[\x21-\x26\x28-\x7e]*$/.test(layout.registrationPath))
    problems.push('the registration path must start with / and hold no space, quote or control character');
  const roles = layout.roles.map((r) => r.role);
  for (const role of new Set(roles)) if (roles.filter((r) => r === role).length > 1) problems.push(`the ${role} role is listed twice`);
  return problems;
}

/**
 * The configuration's text. Throws when `layoutProblems` finds any (callers check first).
 *
 * @example
 * haproxyConfig({ roles: [{ role: 'mapping', bind: { host: '*', port: 8081 }, servers: [{ host: '10.0.0.5', port: 8081 }, { host: '10.0.0.6', port: 8081 }] }] });
 */
export function haproxyConfig(layout: HaproxyLayout): string {
  const problems = layoutProblems(layout);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const inter = layout.checkIntervalMs ?? 2000;
  const ordered = [...layout.roles].sort((a, b) => ROLE_NAMES.indexOf(a.role) - ROLE_NAMES.indexOf(b.role));
  const sections = ordered.map(({ role, bind, servers }) => {
    const pair = role === 'device' && layout.deviceCheck === 'failover-status';
    const registration =
      role === 'gateway'
        ? [
            "    # Registration answers close the connection (interface D), as the gateway's own do.",
            `    http-request set-var(txn.registration) bool(true) if { path ${haproxyWord(layout.registrationPath ?? DEFAULT_REGISTRATION_PATH)} }`,
            '    http-after-response set-header Connection close if { var(txn.registration) -m bool }',
          ]
        : [];
    const backend = (name: string, check: readonly string[]) => [
      `backend ${name}`,
      '    balance roundrobin',
      '    option httpchk',
      ...check,
      `    default-server check inter ${inter} fall 2 rise 2`,
      ...servers.map((server, index) => `    server ${role}${index + 1} ${address(server)}`),
      '',
    ];
    return [
      `frontend ${role}`,
      `    bind ${address(bind)}`,
      ...registration,
      ...(pair
        ? [
            '    # Writes go to the active device of the pair only; reads to any device process.',
            '    use_backend device_active if !METH_GET',
          ]
        : []),
      `    default_backend ${role}_processes`,
      '',
      ...backend(`${role}_processes`, HEALTH_CHECK),
      ...(pair ? backend('device_active', ACTIVE_CHECK) : []),
    ].join('\n');
  });
  const stats = layout.stats
    ? [`frontend stats`, `    bind ${address(layout.stats)}`, '    stats enable', '    stats uri /', '    stats refresh 5s', ''].join('\n')
    : undefined;
  const names = (layout.headerNames ?? []).filter((name) => name !== name.toLowerCase() && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name));
  const header =
    names.length === 0
      ? HEADER
      : `${HEADER.replace('\ndefaults\n', `${caseAdjust(names)}\ndefaults\n`)}    # The names spelled above (h1-case-adjust), towards clients and towards the roles.
    option h1-case-adjust-bogus-client
    option h1-case-adjust-bogus-server
`;
  return `${header}\n${[...sections, ...(stats ? [stats] : [])].join('\n')}`;
}

/** The global lines that spell `names` (HAProxy writes the others in lower case), and the defaults line that applies them. */
const caseAdjust = (names: readonly string[]) =>
  [
    '    # Header names as the roles write them: HAProxy would write them in lower case.',
    ...names.map((name) => `    h1-case-adjust ${name.toLowerCase()} ${name}`),
    '',
  ].join('\n');

const HEADER = `# HAProxy in front of Portolan's roles (written by portolan haproxy-config).
# Check it with: haproxy -c -f <this file>; run it with: haproxy -f <this file>

global
    # maxconn is derived from the file-descriptor limit HAProxy starts with (ulimit -n): raise that for more.

defaults
    mode http
    # A connection refused (a process that died) is tried again on another process of the role.
    retries 3
    option redispatch 1
    timeout connect 5s
    # The roles' own limits: a request head in 10 s, a whole request (large snapshot uploads) in 5 min.
    timeout http-request 10s
    timeout client 5m
    timeout server 5m
    # Clients keep their connection; each request gets a connection of its own to a process, so HAProxy never
    # sends one on a connection the process is closing (its keep-alive, PORTOLAN_KEEP_ALIVE_TIMEOUT_MS, is 5 s).
    timeout http-keep-alive 10s
    option http-server-close
    # The client's address for the roles (set PORTOLAN_TRUSTED_PROXIES to this balancer's addresses): the login
    # backoff counts per client, not per balancer.
    option forwardfor
    timeout check 3s
`;
