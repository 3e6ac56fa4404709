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
  logLevel: (typeof LOG_LEVELS)[number];
  /** Check every handler response against the spec (on in tests). */
  validateResponses: boolean;
  /** Each health dependency check answers within this time. */
  healthCheckTimeoutMs: number;
  /** On SIGTERM, /health answers 503 for this long before listeners close. */
  shutdownDrainMs: number;
  /** In-flight requests get this long to finish before connections are cut and the process exits. */
  shutdownTimeoutMs: number;
}>;

type Schema = Record<string, unknown>;

/** One setting: its key in the JSON file (dotted for nested), its environment variable, schema and default. */
export type Setting = { key: string; env: string; schema: Schema; default: unknown; description: string };

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
  { key: 'logLevel', env: 'PORTOLAN_LOG_LEVEL', schema: { enum: [...LOG_LEVELS] }, default: 'info', description: `Log level: ${LOG_LEVELS.join(', ')}.` },
  { key: 'validateResponses', env: 'PORTOLAN_VALIDATE_RESPONSES', schema: { type: 'boolean' }, default: false, description: 'Check every response against the spec.' },
  { key: 'healthCheckTimeoutMs', env: 'PORTOLAN_HEALTH_CHECK_TIMEOUT_MS', schema: milliseconds(15_000), default: 2000, description: 'Time limit of each /health dependency check, in ms (below the monitor timeout of 16 s).' },
  { key: 'shutdownDrainMs', env: 'PORTOLAN_SHUTDOWN_DRAIN_MS', schema: milliseconds(120_000), default: 1000, description: 'On SIGTERM, /health answers 503 this long before listeners close, in ms.' },
  { key: 'shutdownTimeoutMs', env: 'PORTOLAN_SHUTDOWN_TIMEOUT_MS', schema: milliseconds(300_000), default: 10_000, description: 'Time in-flight requests get to finish on shutdown, in ms.' },
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
const validators = new Map(SETTINGS.map((s) => [s.key, ajv.compile({ type: 'object', properties: { value: s.schema } })]));

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
 * variables, then `overrides` (tests, embedding). Every wrong setting is reported, each in one line.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const file = env[CONFIG_FILE_ENV] ? readConfigFile(env[CONFIG_FILE_ENV]) : {};
  const problems: string[] = [];
  const values = new Map<string, unknown>();
  const knownTopKeys = new Set(SETTINGS.map((s) => s.key.split('.')[0]));
  for (const key of Object.keys(file)) {
    if (!knownTopKeys.has(key)) problems.push(`${CONFIG_FILE_ENV} file: unknown setting '${key}'`);
  }
  for (const setting of SETTINGS) {
    const fromEnv = env[setting.env];
    const fromFile = getPath(file, setting.key);
    const source = fromEnv !== undefined ? setting.env : fromFile !== undefined ? `${setting.key} in the ${CONFIG_FILE_ENV} file` : undefined;
    const holder = { value: fromEnv ?? fromFile ?? setting.default };
    const validate = validators.get(setting.key)!;
    if (!validate(holder)) {
      const reason = validate.errors?.map((e) => (e.keyword === 'enum' ? `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` : e.message)).join(', ');
      problems.push(`${source ?? setting.key} ${reason}, got '${show(fromEnv ?? fromFile)}'`);
    }
    values.set(setting.key, holder.value);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const ports = Object.freeze(Object.fromEntries(ROLE_NAMES.map((role) => [role, values.get(`ports.${role}`)]))) as Record<RoleName, number>;
  const config = Object.fromEntries([...values].filter(([key]) => !key.startsWith('ports.')));
  return Object.freeze({ ...config, ports, ...overrides } as Config);
}
