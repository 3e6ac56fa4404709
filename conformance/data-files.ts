import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import { parse } from 'yaml';

/** The engine's data files (conformance/data/*.yaml): read once, checked against a schema, refused with every problem. */
export const DATA_DIR = fileURLToPath(new URL('./data/', import.meta.url));

const ajv = new Ajv.default({ allErrors: true, strict: false });

const compiled = new Map<string, ReturnType<typeof ajv.compile>>();

export function readDataFile<T>(path: string, schema: object): T {
  let value: unknown;
  try {
    value = parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
  // The schemas are literals built per call; compile each shape once (ajv caches by object identity).
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) compiled.set(key, (validate = ajv.compile(schema)));
  if (!validate(value)) {
    const problems = (validate.errors ?? []).map(
      (e) =>
        `  ${e.instancePath || '(root)'} ${e.message}${e.keyword === 'additionalProperties' ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'` : ''}`,
    );
    throw new Error(`${path} is not valid:\n${problems.join('\n')}`);
  }
  return value as T;
}

/**
 * Per operation: `destructive` why safe mode never sends it; `writes` what it creates or changes in the
 * target (a read-only run never sends it); `reads` why a POST creates nothing the target keeps (a login);
 * `headers` added to every request.
 */
export type OperationData = { destructive?: string; writes?: string; reads?: string; headers?: Record<string, string> };

export function loadOperationData(path = `${DATA_DIR}operations.yaml`): Record<string, OperationData> {
  return readDataFile(path, {
    type: 'object',
    additionalProperties: {
      type: 'object',
      additionalProperties: false,
      properties: {
        destructive: { type: 'string', minLength: 1 },
        writes: { type: 'string', minLength: 1 },
        reads: { type: 'string', minLength: 1 },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
  });
}

export function loadVariables(path = `${DATA_DIR}variables.yaml`): Record<string, unknown> {
  return readDataFile(path, { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } });
}

export type Unreachable = { interface: string; operation: string; status: string; reason: string };

export function loadUnreachable(path = `${DATA_DIR}unreachable.yaml`): Unreachable[] {
  const entries = readDataFile<{ interface: string; operation: string; status: string | number; reason: string }[]>(path, {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['interface', 'operation', 'status', 'reason'],
      properties: {
        interface: { type: 'string' },
        operation: { type: 'string' },
        status: { type: ['string', 'integer'] },
        reason: { type: 'string', minLength: 10 },
      },
    },
  });
  return entries.map((e) => ({ ...e, status: String(e.status) }));
}

const envSource = {
  type: 'object',
  additionalProperties: false,
  required: ['env'],
  properties: { env: { type: 'array', items: { type: 'string' } }, default: { type: 'string' } },
};

export type EnvSource = { env: string[]; default?: string };
export type AuthData = {
  credentials: Record<string, { description: string; user: EnvSource; password: EnvSource }>;
  schemes: Record<
    string,
    {
      credential?: string;
      token?: string;
      login?: { operationId: string; body: Record<string, unknown>; take: { bodyPointer?: string; cookies?: boolean } };
    }
  >;
};

export function loadAuthData(path = `${DATA_DIR}auth.yaml`): AuthData {
  return readDataFile(path, {
    type: 'object',
    additionalProperties: false,
    required: ['credentials', 'schemes'],
    properties: {
      credentials: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          additionalProperties: false,
          required: ['user', 'password'],
          properties: { description: { type: 'string' }, user: envSource, password: envSource },
        },
      },
      schemes: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          additionalProperties: false,
          properties: {
            credential: { type: 'string' },
            token: { type: 'string' },
            login: {
              type: 'object',
              additionalProperties: false,
              required: ['operationId', 'body', 'take'],
              properties: {
                operationId: { type: 'string' },
                body: { type: 'object' },
                take: {
                  type: 'object',
                  additionalProperties: false,
                  properties: { bodyPointer: { type: 'string' }, cookies: { type: 'boolean' } },
                },
              },
            },
          },
        },
      },
    },
  });
}

/** The first environment variable of a source that is set, else its default. */
export function fromEnv(source: EnvSource, env: Record<string, string | undefined>): string | undefined {
  for (const name of source.env) if (env[name] !== undefined && env[name] !== '') return env[name];
  return source.default;
}
