import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import Ajv from 'ajv';
import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from './roles.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Where a pool member listens (the gateway's pool, PORTOLAN_POOL_MEMBERS). */
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
  /** Said instead of "must match pattern ..." when the value breaks the schema's pattern. */
  patternHint?: string;
  /** The value when no source sets it, from the settings decoded before it (by key); `default` is what --help shows. */
  derive?: (values: ReadonlyMap<string, unknown>) => unknown;
  /** A value `derive` gave that is unusable: the one line saying so and which setting to change; else undefined. */
  checkDerived?: (value: unknown, values: ReadonlyMap<string, unknown>) => string | undefined;
};

/** A declaration's value: what `decode` returns, one of its `enum`, or its default's type. */
type Widen<T> = T extends number ? number : T extends string ? string : T extends boolean ? boolean : T;
export type SettingValue<S> = S extends { decode: (value: unknown) => infer D }
  ? D
  : S extends { schema: { enum: readonly (infer E)[] } }
    ? E
    : S extends { default: infer D }
      ? Widen<D>
      : never;

/**
 * The decoded values of a list of declarations (`as const`), by key: the configuration's type derives
 * from the declarations, never written twice. (`ports.<role>` keys are nested: see CoreConfig.)
 */
export type SettingsValues<T extends readonly unknown[]> = {
  readonly [S in T[number] as S extends { key: infer K extends string }
    ? string extends K
      ? never
      : K extends `ports.${string}`
        ? never
        : K
    : never]: SettingValue<S>;
};

export const port = { type: 'integer', minimum: 0, maximum: 65535 } as const;

/** The setting of how many processes `portolan start` runs (also `--workers`). */
export const WORKERS_ENV = 'PORTOLAN_WORKERS';
/** Its values: 1 to 256, or auto (one per core). */
export const WORKERS_PATTERN = '^(auto|[1-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-6])$';

/** The setting that moves every role's default port at once. */
export const PORT_OFFSET_ENV = 'PORTOLAN_PORT_OFFSET';
const inPortRange = (value: unknown) => typeof value === 'number' && value >= 1 && value <= port.maximum;
/** The offset decoded so far, or 0 while it is unset or wrong (a wrong one is reported on its own). */
const offsetIn = (values: ReadonlyMap<string, unknown>) => {
  const offset = values.get('portOffset');
  return typeof offset === 'number' && Number.isInteger(offset) && Math.abs(offset) <= port.maximum ? offset : 0;
};
export const milliseconds = (max: number) => ({ type: 'integer', minimum: 0, maximum: max }) as const;

/** The settings every process has (listeners, store, limits, accounts, roles); interfaces and traffic declare theirs beside them. */
export const CORE_SETTINGS = [
  {
    key: 'host',
    env: 'PORTOLAN_HOST',
    schema: { type: 'string', minLength: 1 },
    default: '127.0.0.1',
    description: 'Address every role listens on.',
  },
  {
    key: 'trustedProxies',
    env: 'PORTOLAN_TRUSTED_PROXIES',
    schema: { type: 'string', pattern: '^[0-9A-Fa-f:.,]*$' },
    default: '',
    description:
      "Addresses of the load balancers in front (comma list, e.g. HAProxy's): a request from one of them comes from the last address its X-Forwarded-For names (login backoff, logs). Empty: none is trusted.",
  },
  {
    key: 'portOffset',
    env: PORT_OFFSET_ENV,
    schema: { type: 'integer', minimum: -65535, maximum: 65535 },
    default: 0,
    description: `Added to every role's default port (${ROLE_NAMES.map((role) => ROLE_DEFINITIONS[role].defaultPort).join(', ')}) to move a whole start: 10000 puts the gateway on 18080; a role's own port setting wins.`,
  },
  ...ROLE_NAMES.map((role) => {
    const env = `PORTOLAN_${role.toUpperCase()}_PORT`;
    const { defaultPort } = ROLE_DEFINITIONS[role];
    return {
      key: `ports.${role}`,
      env,
      schema: port,
      default: defaultPort,
      description: `Port of the ${role} role (0 picks a free port); unset: ${defaultPort} + ${PORT_OFFSET_ENV}.`,
      derive: (values: ReadonlyMap<string, unknown>) => defaultPort + offsetIn(values),
      // One line for the offset, naming the first role it puts out of range (the roles before it are decoded).
      checkDerived: (value: unknown, values: ReadonlyMap<string, unknown>) =>
        inPortRange(value) ||
        ROLE_NAMES.some((other) => {
          const derived = ROLE_DEFINITIONS[other].defaultPort + offsetIn(values);
          return other !== role && values.get(`ports.${other}`) === derived && !inPortRange(derived);
        })
          ? undefined
          : `${PORT_OFFSET_ENV} ${offsetIn(values)} puts the ${role} role on port ${String(value)}, outside 1..${port.maximum}: choose an offset that keeps every role's port in range, or set ${env}`,
    };
  }),
  {
    key: 'database',
    env: 'PORTOLAN_DATABASE',
    schema: { type: 'string', pattern: '^(sqlite:.+|postgres(ql)?://.+)$' },
    default: 'sqlite:./data/portolan.db',
    description: 'Storage: sqlite:<file> (embedded) or postgres://user@host:port/db.',
  },
  {
    key: 'bodyLimitBytes',
    env: 'PORTOLAN_BODY_LIMIT',
    schema: { type: 'integer', minimum: 1, maximum: 1024 ** 3 },
    default: 1048576,
    description: 'Largest request body in bytes; larger bodies get 413.',
  },
  {
    key: 'maxUrlLength',
    env: 'PORTOLAN_MAX_URL_LENGTH',
    schema: { type: 'integer', minimum: 64, maximum: 65_536 },
    default: 8192,
    description: 'Longest request target (path and query) in characters; longer ones get 414.',
  },
  {
    key: 'maxHeaderBytes',
    env: 'PORTOLAN_MAX_HEADER_BYTES',
    schema: { type: 'integer', minimum: 1024, maximum: 1024 ** 2 },
    default: 16_384,
    description:
      'Largest header section of a request in bytes (field names and values; the request line is judged alone by PORTOLAN_MAX_URL_LENGTH, first); larger ones get 431.',
  },
  {
    key: 'headersTimeoutMs',
    env: 'PORTOLAN_HEADERS_TIMEOUT_MS',
    schema: { type: 'integer', minimum: 100, maximum: 3_600_000 },
    default: 10_000,
    description: 'Time a client has to send the whole request head, in ms; then 408.',
  },
  {
    key: 'requestTimeoutMs',
    env: 'PORTOLAN_REQUEST_TIMEOUT_MS',
    schema: milliseconds(86_400_000),
    default: 300_000,
    description:
      'Time a client has to send a whole request, body included, in ms (0: no limit; raise it for large uploads on slow links); then 408.',
  },
  {
    key: 'bodyTimeoutMs',
    env: 'PORTOLAN_BODY_TIMEOUT_MS',
    schema: { type: 'integer', minimum: 100, maximum: 3_600_000 },
    default: 30_000,
    description: 'Time a request body the server reads whole (not a streamed upload) has to arrive once reading began, in ms; then 408.',
  },
  {
    key: 'keepAliveTimeoutMs',
    env: 'PORTOLAN_KEEP_ALIVE_TIMEOUT_MS',
    schema: { type: 'integer', minimum: 0, maximum: 3_600_000 },
    default: 5000,
    description: 'How long an idle keep-alive connection stays open, in ms.',
  },
  {
    key: 'maxRequestsPerSocket',
    env: 'PORTOLAN_MAX_REQUESTS_PER_CONNECTION',
    schema: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    default: 10_000,
    description: 'Requests one keep-alive connection may carry before it is closed (0: no limit).',
  },
  {
    key: 'maxConnections',
    env: 'PORTOLAN_MAX_CONNECTIONS',
    schema: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    default: 4096,
    description: 'Open connections per role; further ones are refused until some close.',
  },
  {
    key: 'logLevel',
    env: 'PORTOLAN_LOG_LEVEL',
    schema: { enum: [...LOG_LEVELS] },
    default: 'info',
    description: `Log level: ${LOG_LEVELS.join(', ')}.`,
  },
  {
    key: 'referencePages',
    env: 'PORTOLAN_REFERENCE_PAGES',
    schema: { type: 'boolean' },
    default: true,
    description:
      'Serve /docs (the API reference page) and /openapi/* (the specs) on every role; false passes those paths on like any other (on the gateway: to the pool).',
  },
  {
    key: 'logFormat',
    env: 'PORTOLAN_LOG_FORMAT',
    schema: { enum: ['auto', 'json', 'pretty'] },
    default: 'auto',
    description: 'Log lines: json, pretty (human-readable), or auto (pretty on a terminal, JSON otherwise).',
  },
  {
    key: 'validateResponses',
    env: 'PORTOLAN_VALIDATE_RESPONSES',
    schema: { type: 'boolean' },
    default: false,
    description: 'Check every response against the spec.',
  },
  {
    key: 'adminUser',
    env: 'PORTOLAN_ADMIN_USER',
    schema: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[^:\\u0000-\\u001f]+$' },
    default: 'admin',
    description: 'Administrative user of the device, central and diagnostics roles.',
  },
  {
    key: 'adminPassword',
    env: 'PORTOLAN_ADMIN_PASSWORD',
    schema: { type: 'string', maxLength: 1024 },
    default: '',
    description: 'Administrative password (stored hashed); empty: generated at first start and printed once.',
    secret: true,
  },
  {
    key: 'loginBackoffFailures',
    env: 'PORTOLAN_LOGIN_BACKOFF_FAILURES',
    schema: { type: 'integer', minimum: 0, maximum: 1000 },
    default: 5,
    description:
      'Failed logins in a row per user name (known or not) before further attempts for it get 401 unchecked for 1 s, doubling to 60 s; a success resets (0: off).',
  },
  {
    key: 'healthCheckTimeoutMs',
    env: 'PORTOLAN_HEALTH_CHECK_TIMEOUT_MS',
    schema: milliseconds(15_000),
    default: 2000,
    description: 'Time limit of each /health dependency check, in ms (below the monitor timeout of 16 s).',
  },
  {
    key: 'shutdownDrainMs',
    env: 'PORTOLAN_SHUTDOWN_DRAIN_MS',
    schema: milliseconds(120_000),
    default: 1000,
    description: 'On SIGTERM, /health answers 503 this long before listeners close, in ms.',
  },
  {
    key: 'shutdownTimeoutMs',
    env: 'PORTOLAN_SHUTDOWN_TIMEOUT_MS',
    schema: milliseconds(300_000),
    default: 10_000,
    description: 'Time in-flight requests get to finish on shutdown, in ms.',
  },
  {
    key: 'roles',
    env: 'PORTOLAN_ROLES',
    schema: { type: 'string', pattern: `^(all|(${ROLE_NAMES.join('|')})(,(${ROLE_NAMES.join('|')}))*)$` },
    default: 'all',
    description: `Roles this process runs: all, or a comma list of ${ROLE_NAMES.join(', ')}.`,
    decode: (value): RoleName[] => (value === 'all' ? [...ROLE_NAMES] : ([...new Set(String(value).split(','))] as RoleName[])),
    encode: (value) => (Array.isArray(value) ? value.join(',') : value),
  },
  {
    key: 'workers',
    env: WORKERS_ENV,
    schema: { type: 'string', pattern: WORKERS_PATTERN },
    patternHint: 'must be a whole number from 1 to 256, or auto',
    default: '1',
    description:
      "Processes that serve the roles together on this machine, sharing each role's port (also: portolan start --workers); auto: one per core. More than 1 needs stores every process shares (docs/scale-out.md).",
    decode: (value): number => (value === 'auto' ? availableParallelism() : Number(value)),
    encode: (value) => (typeof value === 'number' ? String(value) : value),
  },
  {
    key: 'workerRestartMaxDelayMs',
    env: 'PORTOLAN_WORKER_RESTART_MAX_DELAY_MS',
    schema: { type: 'integer', minimum: 500, maximum: 3_600_000 },
    default: 30_000,
    description:
      'With more than 1 worker: the longest pause before a worker that keeps dying is started again, in ms (the first is 500 ms, doubling each time; back to 500 ms once a worker has run a minute).',
  },
] as const satisfies readonly Setting[];

/** The environment variable of a role's port setting, e.g. `PORTOLAN_MAPPING_PORT`. */
export function portSettingOf(role: RoleName): string {
  const setting = CORE_SETTINGS.find((s) => s.key === `ports.${role}`);
  if (!setting) throw new Error(`No port setting for the ${role} role.`);
  return setting.env;
}

/** The decoded core settings, `ports` nested by role. */
export type CoreConfig = SettingsValues<typeof CORE_SETTINGS> & { readonly ports: Readonly<Record<RoleName, number>> };

export const CONFIG_FILE_ENV = 'PORTOLAN_CONFIG';

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

// The settings' schemas are ours and checked by their tests: not checked against the meta-schema at every start (~50 ms).
const ajv = new Ajv.default({ coerceTypes: true, allErrors: true, validateSchema: false });
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
  key
    .split('.')
    .reduce<unknown>((node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined), object);

/** Secrets never travel in config errors; any setting value is shown only when short. */
const show = (value: unknown) => {
  // A URL's user and password (a database URL given where another is expected) are never shown.
  const text = (typeof value === 'string' ? value : JSON.stringify(value)).replace(/(\/\/)[^/@\s]*@/g, '$1***@');
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/**
 * Decodes a configuration from its setting declarations: defaults, then the JSON file named by PORTOLAN_CONFIG, then environment
 * variables, then `overrides` (tests, embedding), every source through the same schemas. Every wrong
 * setting is reported, each in one line. With `partial`, `settings` is a part of the whole list (a client
 * reading the ports of a start): keys of the file that none of them has are left to the settings not read.
 *
 * @example
 * decodeSettings<CoreConfig>(CORE_SETTINGS, { PORTOLAN_PORT_OFFSET: '10' }).ports.gateway // 8090
 */
export function decodeSettings<C>(
  settings: readonly Setting[],
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<C> = {},
  options: { partial?: boolean } = {},
): C {
  const file = env[CONFIG_FILE_ENV] ? readConfigFile(env[CONFIG_FILE_ENV]) : {};
  const problems: string[] = [];
  const values = new Map<string, unknown>();
  const knownTopKeys = new Set(settings.map((s) => s.key.split('.')[0]));
  for (const key of Object.keys(file)) {
    if (!knownTopKeys.has(key) && !options.partial) problems.push(`${CONFIG_FILE_ENV} file: unknown setting '${key}'`);
  }
  const knownOverrides = new Set(settings.map((s) => s.key.split('.')[0]));
  for (const key of Object.keys(overrides)) {
    if (!knownOverrides.has(key)) problems.push(`override: unknown setting '${key}'`);
  }
  for (const setting of settings) {
    const override = getPath(overrides as Record<string, unknown>, setting.key);
    const fromOverride = override === undefined ? undefined : setting.encode ? setting.encode(override) : override;
    const fromEnv = env[setting.env];
    const fromFile = getPath(file, setting.key);
    const source =
      fromOverride !== undefined
        ? `override ${setting.key}`
        : fromEnv !== undefined
          ? setting.env
          : fromFile !== undefined
            ? `${setting.key} in the ${CONFIG_FILE_ENV} file`
            : undefined;
    const holder = { value: fromOverride ?? fromEnv ?? fromFile ?? (setting.derive ? setting.derive(values) : setting.default) };
    const validate = source === undefined ? undefined : validatorOf(setting);
    const valid = validate ? validate(holder) : true;
    const derivedProblem = source === undefined && setting.derive ? setting.checkDerived?.(holder.value, values) : undefined;
    if (derivedProblem !== undefined) problems.push(derivedProblem);
    if (!valid) {
      const reason = validate?.errors
        ?.map((e) =>
          e.keyword === 'enum'
            ? `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`
            : e.keyword === 'pattern' && setting.patternHint
              ? setting.patternHint
              : e.message,
        )
        .join(', ');
      problems.push(`${source ?? setting.key} ${reason}${setting.secret ? '' : `, got '${show(fromOverride ?? fromEnv ?? fromFile)}'`}`);
    }
    values.set(setting.key, setting.decode && valid ? setting.decode(holder.value) : holder.value);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const ports = Object.freeze(Object.fromEntries(ROLE_NAMES.map((role) => [role, values.get(`ports.${role}`)]))) as Record<
    RoleName,
    number
  >;
  const config = Object.fromEntries([...values].filter(([key]) => !key.startsWith('ports.')));
  return Object.freeze({ ...config, ports }) as C;
}
