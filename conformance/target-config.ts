// `portolan conformance --config <file>`: where each role of a target runs, for a build that publishes no
// role map (a team's own build, a real device), with the registration host and the names of the environment
// variables that hold its credentials. YAML or JSON (JSON is YAML).
import { fromEnv, loadAuthData, readDataFile } from './data-files.ts';
import { parseTargets, type TargetMap } from './targets.ts';

/** The config file as written. */
export type TargetConfigFile = {
  /** Role (gateway, mapping, device, central, diagnostics, login) or interface -> base URL. */
  roles: Record<string, string>;
  /** The Host registration requests are sent with (else localhost:<the gateway's port>). */
  registrationHost?: string;
  /** Per credential of conformance/data/auth.yaml (admin, registration): the environment variables that hold it. */
  credentials?: Record<string, { user?: string; password: string }>;
  /** Send requests that create or change something in the target (as --allow-writes). */
  allowWrites?: boolean;
};

/** The config as the run uses it. */
export type TargetConfig = {
  targets: TargetMap;
  registrationHost?: string;
  /** The shell variables of each credential the file names (its user's only when given). */
  credentialVariables: Record<string, { user?: string; password: string }>;
  allowWrites?: boolean;
};

/**
 * Reads and checks a config file; throws one message naming the file and what is wrong.
 *
 * @example
 * // conformance.yaml:
 * //   roles: { gateway: 'http://10.0.0.5:8080', mapping: 'http://10.0.0.5:8081' }
 * //   credentials: { admin: { password: MY_ADMIN_PASSWORD } }
 * const config = loadTargetConfig('conformance.yaml');
 */
export function loadTargetConfig(path: string): TargetConfig {
  const file = readDataFile<TargetConfigFile>(path, {
    type: 'object',
    additionalProperties: false,
    required: ['roles'],
    properties: {
      roles: { type: 'object', minProperties: 1, additionalProperties: { type: 'string' } },
      registrationHost: { type: 'string', minLength: 1 },
      credentials: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          additionalProperties: false,
          required: ['password'],
          properties: { user: { type: 'string', pattern: ENV_NAME }, password: { type: 'string', pattern: ENV_NAME } },
        },
      },
      allowWrites: { type: 'boolean' },
    },
  });
  let targets: TargetMap;
  try {
    targets = parseTargets(
      Object.entries(file.roles).map(([key, url]) => `${key}=${url}`),
      `${path}: roles`,
    ).map;
  } catch (error) {
    throw new Error((error as Error).message);
  }
  const known = Object.keys(loadAuthData().credentials);
  const unknown = Object.keys(file.credentials ?? {}).filter((name) => !known.includes(name));
  if (unknown.length > 0) throw new Error(`${path}: credentials ${unknown.join(', ')}: unknown; known: ${known.join(', ')}`);
  return {
    targets,
    ...(file.registrationHost ? { registrationHost: file.registrationHost } : {}),
    credentialVariables: file.credentials ?? {},
    ...(file.allowWrites !== undefined ? { allowWrites: file.allowWrites } : {}),
  };
}

/** An environment variable's name (the file names variables, never holds a credential). */
const ENV_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';

/**
 * The credentials the config names, read from the environment; throws naming the first variable that is
 * not set (never a value).
 */
export function configCredentials(
  config: TargetConfig,
  env: Record<string, string | undefined>,
  path: string,
): Record<string, { user: string; password: string }> {
  const found: Record<string, { user: string; password: string }> = {};
  const auth = loadAuthData();
  for (const [name, vars] of Object.entries(config.credentialVariables)) {
    const password = env[vars.password];
    if (!password) throw new Error(`${path}: credentials.${name}.password names ${vars.password}, which is not set`);
    const source = auth.credentials[name]?.user;
    const user = vars.user ? env[vars.user] : source && fromEnv(source, env);
    if (!user)
      throw new Error(`${path}: credentials.${name}.user ${vars.user ? `names ${vars.user}, which is not set` : 'is needed (no default)'}`);
    found[name] = { user, password };
  }
  return found;
}
