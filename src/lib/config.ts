import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from './roles.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The decoded configuration: frozen, every default in SETTINGS below. */
export type Config = Readonly<{
  host: string;
  ports: Readonly<Record<RoleName, number>>;
  /** `sqlite:<file>` (embedded, the default) or `postgres://...`. */
  database: string;
  /** Largest request body accepted, in bytes (413 past it). */
  bodyLimitBytes: number;
  /** Limits every listener sets on its clients (408, 414, 431 and the connection caps). */
  maxUrlLength: number;
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  bodyTimeoutMs: number;
  maxRequestsPerSocket: number;
  maxConnections: number;
  logLevel: (typeof LOG_LEVELS)[number];
  /** Check every handler response against the spec (on in tests). */
  validateResponses: boolean;
  /** Client registration (D): only a POST to this path with this Host is a registration request. */
  registrationPath: string;
  registrationHost: string;
  /** Access profile the registering user's credentials are checked against (accounts). */
  registrationAccessProfile: string;
  registrationPartition: string;
  registrationOauthProfile: string;
  registrationScopes: string;
  registrationAccessPolicy: string;
  /** When on, registration answers the static pair below and creates nothing. */
  registrationStaticCredentials: boolean;
  registrationStaticClientId: string;
  registrationStaticClientSecret: string;
  registrationSessionTimeoutSeconds: number;
  registrationSessionLifetimeSeconds: number;
  registrationMaxBodyBytes: number;
  /** The device's management interface registration calls; empty: the device role of this process. */
  managementUrl: string;
  /** The administrative account (DESIGN.md "Accounts"); an empty password means none was given. */
  adminUser: string;
  adminPassword: string;
  /** Failed logins in a row per user name before that name's attempts wait (1 s, doubling to 60 s); 0 turns it off. */
  loginBackoffFailures: number;
  /** Each health dependency check answers within this time. */
  healthCheckTimeoutMs: number;
  /** Access sessions (H): lifetime from creation, and the longest identity token jwt-parse accepts. */
  accessSessionLifetimeSeconds: number;
  accessSessionMaxTokenLength: number;
  /** The default authorization request of the identity platform (H), cloned with login_hint. */
  authorizationUrl: string;
  authorizationClientId: string;
  authorizationRedirectUri: string;
  authorizationScope: string;
  /** On SIGTERM, /health answers 503 for this long before listeners close. */
  shutdownDrainMs: number;
  /** In-flight requests get this long to finish before connections are cut and the process exits. */
  shutdownTimeoutMs: number;
  /** The roles this process runs (all by default); several processes can share the work. */
  roles: readonly RoleName[];
  /** Whether the gateway counts and limits bearer tokens at all (E); off for benchmarks and trials. */
  rateLimitEnabled: boolean;
  /** Rate-limit counters (E): `memory`, `sqlite:<file>` or `redis://host:port[/db]`. */
  rateLimitStore: string;
  rateLimitLimit: number;
  rateLimitWindowSeconds: number;
  /** What the limiter does while Redis does not answer. */
  rateLimitOutagePolicy: 'fail-open' | 'fail-closed' | 'memory';
  rateLimitRedisKeyPrefix: string;
  /** A counter store silent this long counts as down (the outage policy decides meanwhile). */
  rateLimitStoreTimeoutMs: number;
  /** The gateway's pool members; empty means the mapping role of this process. */
  poolMembers: readonly PoolMemberAddress[];
  poolName: string;
  monitorIntervalMs: number;
  monitorTimeoutMs: number;
  monitorTimeUntilUpMs: number;
  upstreamTimeoutMs: number;
  upstreamConnections: number;
}>;

export type PoolMemberAddress = { host: string; port: number };

type Schema = Record<string, unknown>;

/** One setting: its key in the JSON file (dotted for nested), its environment variable, schema and default. */
export type Setting = {
  key: string;
  env: string;
  schema: Schema;
  default: unknown;
  description: string;
  /** Turns the validated value into its typed form (lists, addresses); the identity when absent. */
  decode?: (value: unknown) => unknown;
  /** The reverse of `decode`, so a typed override (tests, embedding) is checked by the same schema. */
  encode?: (value: unknown) => unknown;
  /** A password or key: its value is never shown (config errors, --help). */
  secret?: boolean;
};

const port = { type: 'integer', minimum: 0, maximum: 65535 };
const milliseconds = (max: number) => ({ type: 'integer', minimum: 0, maximum: max });

/** Every setting, with its default: the one place defaults live (also --help and the README). */
export const SETTINGS: readonly Setting[] = [
  { key: 'host', env: 'PORTOLAN_HOST', schema: { type: 'string', minLength: 1 }, default: '127.0.0.1', description: 'Address every role listens on.' },
  ...ROLE_NAMES.map((role) => ({
    key: `ports.${role}`,
    env: `PORTOLAN_${role.toUpperCase()}_PORT`,
    schema: port,
    default: ROLE_DEFINITIONS[role].defaultPort,
    description: `Port of the ${role} role (0 picks a free port).`,
  })),
  {
    key: 'database',
    env: 'PORTOLAN_DATABASE',
    schema: { type: 'string', pattern: '^(sqlite:.+|postgres(ql)?://.+)$' },
    default: 'sqlite:./data/portolan.db',
    description: 'Storage: sqlite:<file> (embedded) or postgres://user@host:port/db.',
  },
  { key: 'bodyLimitBytes', env: 'PORTOLAN_BODY_LIMIT', schema: { type: 'integer', minimum: 1, maximum: 1024 ** 3 }, default: 1048576, description: 'Largest request body in bytes; larger bodies get 413.' },
  { key: 'maxUrlLength', env: 'PORTOLAN_MAX_URL_LENGTH', schema: { type: 'integer', minimum: 64, maximum: 65_536 }, default: 8192, description: 'Longest request target (path and query) in characters; longer ones get 414.' },
  { key: 'maxHeaderBytes', env: 'PORTOLAN_MAX_HEADER_BYTES', schema: { type: 'integer', minimum: 1024, maximum: 1024 ** 2 }, default: 16_384, description: 'Largest request head (request line and headers) in bytes; larger ones get 431.' },
  { key: 'headersTimeoutMs', env: 'PORTOLAN_HEADERS_TIMEOUT_MS', schema: { type: 'integer', minimum: 100, maximum: 3_600_000 }, default: 10_000, description: 'Time a client has to send the whole request head, in ms; then 408.' },
  { key: 'requestTimeoutMs', env: 'PORTOLAN_REQUEST_TIMEOUT_MS', schema: milliseconds(86_400_000), default: 300_000, description: 'Time a client has to send a whole request, body included, in ms (0: no limit; raise it for large uploads on slow links); then 408.' },
  { key: 'bodyTimeoutMs', env: 'PORTOLAN_BODY_TIMEOUT_MS', schema: { type: 'integer', minimum: 100, maximum: 3_600_000 }, default: 30_000, description: 'Time a request body the server reads whole (not a streamed upload) has to arrive once reading began, in ms; then 408.' },
  { key: 'keepAliveTimeoutMs', env: 'PORTOLAN_KEEP_ALIVE_TIMEOUT_MS', schema: { type: 'integer', minimum: 0, maximum: 3_600_000 }, default: 5000, description: 'How long an idle keep-alive connection stays open, in ms.' },
  { key: 'maxRequestsPerSocket', env: 'PORTOLAN_MAX_REQUESTS_PER_CONNECTION', schema: { type: 'integer', minimum: 0, maximum: 1_000_000 }, default: 10_000, description: 'Requests one keep-alive connection may carry before it is closed (0: no limit).' },
  { key: 'maxConnections', env: 'PORTOLAN_MAX_CONNECTIONS', schema: { type: 'integer', minimum: 1, maximum: 1_000_000 }, default: 4096, description: 'Open connections per role; further ones are refused until some close.' },
  { key: 'logLevel', env: 'PORTOLAN_LOG_LEVEL', schema: { enum: [...LOG_LEVELS] }, default: 'info', description: `Log level: ${LOG_LEVELS.join(', ')}.` },
  { key: 'validateResponses', env: 'PORTOLAN_VALIDATE_RESPONSES', schema: { type: 'boolean' }, default: false, description: 'Check every response against the spec.' },
  { key: 'registrationPath', env: 'PORTOLAN_REGISTRATION_PATH', schema: { type: 'string', pattern: '^/[^?#\\s]*$', maxLength: 1024 }, default: '/vendor-oauth2/v1/client-register', description: 'Path of the client-registration endpoint (D).' },
  { key: 'registrationHost', env: 'PORTOLAN_REGISTRATION_HOST', schema: { type: 'string', minLength: 1, maxLength: 255 }, default: 'localhost:8080', description: 'Host header value of registration requests (D).' },
  { key: 'registrationAccessProfile', env: 'PORTOLAN_REGISTRATION_ACCESS_PROFILE', schema: { type: 'string', minLength: 1, maxLength: 255 }, default: 'registration_check', description: 'Access profile that checks the registering user (D; users added with `portolan users add --profile`).' },
  { key: 'registrationPartition', env: 'PORTOLAN_REGISTRATION_PARTITION', schema: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[^~/]+$' }, default: 'Common', description: 'Partition of the OAuth profile and access policy (D).' },
  { key: 'registrationOauthProfile', env: 'PORTOLAN_REGISTRATION_OAUTH_PROFILE', schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^~/]+$' }, default: 'oauth_server', description: 'OAuth profile new client applications are bound to (D).' },
  { key: 'registrationScopes', env: 'PORTOLAN_REGISTRATION_SCOPES', schema: { type: 'string', maxLength: 1024 }, default: 'openid profile', description: 'Scopes of the created client applications (D).' },
  { key: 'registrationAccessPolicy', env: 'PORTOLAN_REGISTRATION_ACCESS_POLICY', schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^~/]+$' }, default: 'oauth_access_policy', description: 'Access policy re-applied after a binding (D).' },
  { key: 'registrationStaticCredentials', env: 'PORTOLAN_REGISTRATION_STATIC_CREDENTIALS', schema: { type: 'boolean' }, default: false, description: 'Answer the static client id and secret and create nothing (D).' },
  { key: 'registrationStaticClientId', env: 'PORTOLAN_REGISTRATION_STATIC_CLIENT_ID', schema: { type: 'string', maxLength: 1024 }, default: '', description: 'Static client_id (D; required when static credentials are on).' },
  { key: 'registrationStaticClientSecret', env: 'PORTOLAN_REGISTRATION_STATIC_CLIENT_SECRET', schema: { type: 'string', maxLength: 1024 }, default: '', description: 'Static client_secret (D; required when static credentials are on).', secret: true },
  { key: 'registrationSessionTimeoutSeconds', env: 'PORTOLAN_REGISTRATION_SESSION_TIMEOUT_SECONDS', schema: { type: 'integer', minimum: 1, maximum: 86_400 }, default: 300, description: 'Idle timeout of a registration connection, in seconds (D).' },
  { key: 'registrationSessionLifetimeSeconds', env: 'PORTOLAN_REGISTRATION_SESSION_LIFETIME_SECONDS', schema: { type: 'integer', minimum: 1, maximum: 86_400 }, default: 300, description: 'Longest life of a registration connection, in seconds (D).' },
  { key: 'registrationMaxBodyBytes', env: 'PORTOLAN_REGISTRATION_MAX_BODY_BYTES', schema: { type: 'integer', minimum: 1, maximum: 1024 ** 3 }, default: 1048576, description: 'Largest registration body, by Content-Length; larger ones get 413 (D).' },
  { key: 'managementUrl', env: 'PORTOLAN_MANAGEMENT_URL', schema: { type: 'string', pattern: '^(https?://[^\\s]+)?$' }, default: '', description: 'Device management interface registration calls (D); empty: the device role of this process.' },
  { key: 'adminUser', env: 'PORTOLAN_ADMIN_USER', schema: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[^:\\u0000-\\u001f]+$' }, default: 'admin', description: 'Administrative user of the device, central and diagnostics roles.' },
  { key: 'adminPassword', env: 'PORTOLAN_ADMIN_PASSWORD', schema: { type: 'string', maxLength: 1024 }, default: '', description: 'Administrative password (stored hashed); empty: generated at first start and printed once.', secret: true },
  { key: 'loginBackoffFailures', env: 'PORTOLAN_LOGIN_BACKOFF_FAILURES', schema: { type: 'integer', minimum: 0, maximum: 1000 }, default: 5, description: 'Failed logins in a row per user name (known or not) before further attempts for it get 401 unchecked for 1 s, doubling to 60 s; a success resets (0: off).' },
  { key: 'healthCheckTimeoutMs', env: 'PORTOLAN_HEALTH_CHECK_TIMEOUT_MS', schema: milliseconds(15_000), default: 2000, description: 'Time limit of each /health dependency check, in ms (below the monitor timeout of 16 s).' },
  { key: 'accessSessionLifetimeSeconds', env: 'PORTOLAN_ACCESS_SESSION_LIFETIME_SECONDS', schema: { type: 'integer', minimum: 1, maximum: 86_400 }, default: 300, description: 'Lifetime of an access session from its creation, in seconds (H).' },
  { key: 'accessSessionMaxTokenLength', env: 'PORTOLAN_ACCESS_SESSION_MAX_TOKEN_LENGTH', schema: { type: 'integer', minimum: 16, maximum: 65_536 }, default: 16384, description: 'Longest identity token the jwt-parse agent accepts, in characters (H).' },
  { key: 'authorizationUrl', env: 'PORTOLAN_AUTHORIZATION_URL', schema: { type: 'string', pattern: '^https?://[^\\s#]+$', maxLength: 2048 }, default: 'https://login.example.com/common/oauth2/v2.0/authorize', description: 'Identity-provider authorization URL of the login_hint redirect (H; no fragment).' },
  { key: 'authorizationClientId', env: 'PORTOLAN_AUTHORIZATION_CLIENT_ID', schema: { type: 'string', minLength: 1, maxLength: 1024 }, default: 'portolan-gateway', description: 'client_id of the authorization request (H).' },
  { key: 'authorizationRedirectUri', env: 'PORTOLAN_AUTHORIZATION_REDIRECT_URI', schema: { type: 'string', pattern: '^https?://[^\\s#]+$', maxLength: 2048 }, default: 'https://localhost:8080/oauth/client/redirect', description: 'redirect_uri of the authorization request (H).' },
  { key: 'authorizationScope', env: 'PORTOLAN_AUTHORIZATION_SCOPE', schema: { type: 'string', minLength: 1, maxLength: 1024 }, default: 'openid profile', description: 'scope of the authorization request (H; space-separated).' },
  { key: 'shutdownDrainMs', env: 'PORTOLAN_SHUTDOWN_DRAIN_MS', schema: milliseconds(120_000), default: 1000, description: 'On SIGTERM, /health answers 503 this long before listeners close, in ms.' },
  { key: 'shutdownTimeoutMs', env: 'PORTOLAN_SHUTDOWN_TIMEOUT_MS', schema: milliseconds(300_000), default: 10_000, description: 'Time in-flight requests get to finish on shutdown, in ms.' },
  {
    key: 'roles',
    env: 'PORTOLAN_ROLES',
    schema: { type: 'string', pattern: `^(all|(${ROLE_NAMES.join('|')})(,(${ROLE_NAMES.join('|')}))*)$` },
    default: 'all',
    description: `Roles this process runs: all, or a comma list of ${ROLE_NAMES.join(', ')}.`,
    decode: (value) => (value === 'all' ? [...ROLE_NAMES] : [...new Set(String(value).split(','))]),
    encode: (value) => (Array.isArray(value) ? value.join(',') : value),
  },
  { key: 'rateLimitEnabled', env: 'PORTOLAN_RATE_LIMIT_ENABLED', schema: { type: 'boolean' }, default: true, description: 'Whether the gateway rate-limits bearer tokens (E).' },
  {
    key: 'rateLimitStore',
    env: 'PORTOLAN_RATE_LIMIT_STORE',
    schema: { type: 'string', pattern: '^(memory|sqlite:.+|rediss?://.+)$' },
    default: 'memory',
    description: 'Rate-limit counters: memory (one process), sqlite:<file> (processes on one machine), redis://host:port (several machines).',
  },
  { key: 'rateLimitLimit', env: 'PORTOLAN_RATE_LIMIT_LIMIT', schema: { type: 'integer', minimum: 1, maximum: 1e9 }, default: 1000, description: 'Requests allowed per token and window (E).' },
  { key: 'rateLimitWindowSeconds', env: 'PORTOLAN_RATE_LIMIT_WINDOW_SECONDS', schema: { type: 'integer', minimum: 1, maximum: 86_400 * 366 }, default: 300, description: 'Window length in seconds, from the first request, never extended (E).' },
  {
    key: 'rateLimitOutagePolicy',
    env: 'PORTOLAN_RATE_LIMIT_OUTAGE_POLICY',
    schema: { enum: ['fail-open', 'fail-closed', 'memory'] },
    default: 'memory',
    description: 'While Redis does not answer: fail-open (pass uncounted), fail-closed (503), memory (count in this process).',
  },
  {
    key: 'rateLimitStoreTimeoutMs',
    env: 'PORTOLAN_RATE_LIMIT_STORE_TIMEOUT_MS',
    schema: { type: 'integer', minimum: 1, maximum: 60_000 },
    default: 50,
    description: 'A Redis or SQLite counter store that answers nothing for this long is down and the outage policy decides (keeps decisions under 100 ms).',
  },
  { key: 'rateLimitRedisKeyPrefix', env: 'PORTOLAN_RATE_LIMIT_REDIS_KEY_PREFIX', schema: { type: 'string', maxLength: 200 }, default: 'portolan:rl:', description: 'Prefix of the counter keys in Redis.' },
  {
    key: 'poolMembers',
    env: 'PORTOLAN_POOL_MEMBERS',
    schema: { type: 'string', pattern: '^(|[^,:\\s]+:\\d{1,5}(,[^,:\\s]+:\\d{1,5})*)$' },
    default: '',
    description: 'Gateway pool members as host:port,host:port (empty: the mapping role of this process).',
    decode: (value) =>
      String(value)
        .split(',')
        .filter(Boolean)
        .map((member) => ({ host: member.slice(0, member.lastIndexOf(':')), port: Number(member.slice(member.lastIndexOf(':') + 1)) })),
    encode: (value) => (Array.isArray(value) ? (value as PoolMemberAddress[]).map((m) => `${m.host}:${m.port}`).join(',') : value),
  },
  { key: 'poolName', env: 'PORTOLAN_POOL_NAME', schema: { type: 'string', minLength: 1, maxLength: 100 }, default: 'mapping', description: 'Name of the gateway pool.' },
  { key: 'monitorIntervalMs', env: 'PORTOLAN_MONITOR_INTERVAL_MS', schema: { type: 'integer', minimum: 10, maximum: 3_600_000 }, default: 5000, description: 'Health monitor interval per pool member, in ms (G: 5 s).' },
  { key: 'monitorTimeoutMs', env: 'PORTOLAN_MONITOR_TIMEOUT_MS', schema: { type: 'integer', minimum: 10, maximum: 3_600_000 }, default: 16_000, description: 'Health monitor timeout, in ms (G: 16 s).' },
  { key: 'monitorTimeUntilUpMs', env: 'PORTOLAN_MONITOR_TIME_UNTIL_UP_MS', schema: milliseconds(3_600_000), default: 0, description: 'How long a member must answer 200 before it is marked up, in ms (G: 0).' },
  { key: 'upstreamTimeoutMs', env: 'PORTOLAN_UPSTREAM_TIMEOUT_MS', schema: { type: 'integer', minimum: 1, maximum: 3_600_000 }, default: 30_000, description: 'Time a pool member has to send its response headers before the gateway answers 504, in ms.' },
  { key: 'upstreamConnections', env: 'PORTOLAN_UPSTREAM_CONNECTIONS', schema: { type: 'integer', minimum: 1, maximum: 10_000 }, default: 128, description: 'Keep-alive connections per pool member.' },
];

export const CONFIG_FILE_ENV = 'PORTOLAN_CONFIG';

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

const ajv = new Ajv.default({ coerceTypes: true, allErrors: true });
// Compiled when a setting is given, once per distinct schema: compiling all of them up front cost ~50 ms
// of every start. Defaults are not checked at run time (config.test.ts checks each against its schema).
const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function validatorOf(setting: Setting) {
  const key = JSON.stringify(setting.schema);
  let validate = validators.get(key);
  if (!validate) validators.set(key, (validate = ajv.compile({ type: 'object', properties: { value: setting.schema } })));
  return validate;
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([`${CONFIG_FILE_ENV}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`]);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch {
    throw new ConfigError([`${CONFIG_FILE_ENV}: ${path} is not a JSON object`]);
  }
}

const getPath = (object: Record<string, unknown>, key: string): unknown =>
  key.split('.').reduce<unknown>((node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined), object);

/** Secrets never travel in config errors; any setting value is shown only when short. */
const show = (value: unknown) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/**
 * Decodes the configuration: defaults, then the JSON file named by PORTOLAN_CONFIG, then environment
 * variables, then `overrides` (tests, embedding), every source through the same schemas. Every wrong
 * setting is reported, each in one line.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const file = env[CONFIG_FILE_ENV] ? readConfigFile(env[CONFIG_FILE_ENV]) : {};
  const problems: string[] = [];
  const values = new Map<string, unknown>();
  const knownTopKeys = new Set(SETTINGS.map((s) => s.key.split('.')[0]));
  for (const key of Object.keys(file)) {
    if (!knownTopKeys.has(key)) problems.push(`${CONFIG_FILE_ENV} file: unknown setting '${key}'`);
  }
  const knownOverrides = new Set(SETTINGS.map((s) => s.key.split('.')[0]));
  for (const key of Object.keys(overrides)) {
    if (!knownOverrides.has(key)) problems.push(`override: unknown setting '${key}'`);
  }
  for (const setting of SETTINGS) {
    const override = getPath(overrides as Record<string, unknown>, setting.key);
    const fromOverride = override === undefined ? undefined : setting.encode ? setting.encode(override) : override;
    const fromEnv = env[setting.env];
    const fromFile = getPath(file, setting.key);
    const source = fromOverride !== undefined ? `override ${setting.key}` : fromEnv !== undefined ? setting.env : fromFile !== undefined ? `${setting.key} in the ${CONFIG_FILE_ENV} file` : undefined;
    const holder = { value: fromOverride ?? fromEnv ?? fromFile ?? setting.default };
    const validate = source === undefined ? undefined : validatorOf(setting);
    const valid = validate ? validate(holder) : true;
    if (!valid) {
      const reason = validate?.errors?.map((e) => (e.keyword === 'enum' ? `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` : e.message)).join(', ');
      problems.push(`${source ?? setting.key} ${reason}${setting.secret ? '' : `, got '${show(fromOverride ?? fromEnv ?? fromFile)}'`}`);
    }
    values.set(setting.key, setting.decode && valid ? setting.decode(holder.value) : holder.value);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const ports = Object.freeze(Object.fromEntries(ROLE_NAMES.map((role) => [role, values.get(`ports.${role}`)]))) as Record<RoleName, number>;
  const config = Object.fromEntries([...values].filter(([key]) => !key.startsWith('ports.')));
  return Object.freeze({ ...config, ports } as Config);
}
