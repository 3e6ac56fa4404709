import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from './roles.ts';

/** The decoded configuration: frozen, every default in this file. */
export type Config = Readonly<{
  host: string;
  ports: Readonly<Record<RoleName, number>>;
  /** Largest request body accepted, in bytes (413 past it). */
  bodyLimitBytes: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Check every handler response against the spec (on in tests). */
  validateResponses: boolean;
}>;

export type ConfigSetting = { env: string; description: string; default: string };

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Every setting, for `--help` and the README. */
export const SETTINGS: readonly ConfigSetting[] = [
  { env: 'PORTOLAN_HOST', description: 'Address every role listens on.', default: '127.0.0.1' },
  ...ROLE_NAMES.map((role) => ({
    env: `PORTOLAN_${role.toUpperCase()}_PORT`,
    description: `Port of the ${role} role (0 picks a free port).`,
    default: String(ROLE_DEFINITIONS[role].defaultPort),
  })),
  { env: 'PORTOLAN_BODY_LIMIT', description: 'Largest request body in bytes; larger bodies get 413.', default: '1048576' },
  { env: 'PORTOLAN_LOG_LEVEL', description: `Log level: ${LOG_LEVELS.join(', ')}.`, default: 'info' },
  { env: 'PORTOLAN_VALIDATE_RESPONSES', description: 'Check every response against the spec (true/false).', default: 'false' },
];

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/**
 * Decodes the configuration from environment variables (and overrides, for tests and embedding).
 * Every wrong setting is reported, not only the first.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];
  const read = (name: string) => env[name] ?? SETTINGS.find((s) => s.env === name)!.default;
  const integer = (name: string, min: number, max: number) => {
    const raw = read(name);
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}, got '${raw}'`);
    }
    return value;
  };
  const ports = Object.fromEntries(ROLE_NAMES.map((role) => [role, integer(`PORTOLAN_${role.toUpperCase()}_PORT`, 0, 65535)])) as Record<RoleName, number>;
  const logLevel = read('PORTOLAN_LOG_LEVEL');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) problems.push(`PORTOLAN_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got '${logLevel}'`);
  const validate = read('PORTOLAN_VALIDATE_RESPONSES');
  if (!['true', 'false'].includes(validate)) problems.push(`PORTOLAN_VALIDATE_RESPONSES must be true or false, got '${validate}'`);
  const config = {
    host: read('PORTOLAN_HOST'),
    ports,
    bodyLimitBytes: integer('PORTOLAN_BODY_LIMIT', 1, 1024 ** 3),
    logLevel: logLevel as Config['logLevel'],
    validateResponses: validate === 'true',
    ...overrides,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze({ ...config, ports: Object.freeze({ ...config.ports }) });
}
