import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readDataFile } from './data-files.ts';

/** Where the scenarios live: one YAML (or JSON) file each; adding a scenario is adding a file. */
export const SCENARIOS_DIR = fileURLToPath(new URL('./scenarios/', import.meta.url));

/** A value a response must have: a literal (deep equality) or one `$` matcher. */
export type Matcher = unknown;

export type StepRequest = {
  operationId: string;
  /** Send to this role's target instead of the operation's own (e.g. a mapping operation through the gateway). */
  role?: string;
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  headers?: Record<string, unknown>;
  /** false: send no credentials even where the operation has security. */
  auth?: boolean;
  body?: unknown;
  /** A named example of the operation's request body. */
  bodyExample?: string;
  contentType?: string;
  /** Bytes sent as they are: text, or `fill` repeated to `bytes` bytes. */
  rawBody?: string | { fill: string; bytes: number | string };
};

export type Step = {
  name: string;
  request?: StepRequest;
  /** Send the request this many times (a number or a `${variable}`); every answer must meet `expect`. */
  repeat?: number | string;
  /** Send the request this many times at once (a lock, a race); every answer must meet `expect`. */
  concurrently?: number | string;
  expect?: {
    status?: number | number[];
    headers?: Record<string, Matcher>;
    /** JSON pointer (variables allowed) -> matcher. */
    body?: Record<string, Matcher>;
  };
  /**
   * Ask again until the answer meets `expect` (a task that finishes, a snapshot that is processed):
   * every `every` ms, at most `max` requests; each answer before that must meet `while`.
   */
  poll?: { every: number | string; max: number | string; while: NonNullable<Step['expect']> };
  /**
   * Variable name -> `/json/pointer` into the body, `header:<name>`, or `status`; or
   * `{from, match}` to keep the first group of a regular expression (an id inside a Location URL).
   */
  capture?: Record<string, string | { from: string; match: string }>;
  /** Checks on variables only (no request): each pair must be equal. */
  assert?: { equal: [unknown, unknown] }[];
};

export type Scenario = {
  name: string;
  description: string;
  requires: { interfaces: string[]; credentials?: string[]; destructive: boolean };
  variables?: Record<string, unknown>;
  steps: Step[];
};

export type LoadedScenario = Scenario & { file: string };

const scalar = { type: ['string', 'number', 'boolean'] };
const SCENARIO_SCHEMA = {
  $defs: {
    expect: {
      type: 'object',
      additionalProperties: false,
      properties: {
        status: { oneOf: [{ type: 'integer' }, { type: 'array', items: { type: 'integer' }, minItems: 1 }] },
        headers: { type: 'object' },
        body: { type: 'object' },
      },
    },
    captureFrom: { type: 'string', pattern: '^(/.*|header:.+|status)?$' },
  },
  type: 'object',
  additionalProperties: false,
  required: ['name', 'description', 'requires', 'steps'],
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9-]+$' },
    description: { type: 'string', minLength: 1 },
    requires: {
      type: 'object',
      additionalProperties: false,
      required: ['interfaces', 'destructive'],
      properties: {
        interfaces: { type: 'array', minItems: 1, items: { type: 'string' } },
        credentials: { type: 'array', items: { type: 'string' } },
        destructive: { type: 'boolean' },
      },
    },
    variables: { type: 'object', additionalProperties: scalar },
    steps: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1 },
          request: {
            type: 'object',
            additionalProperties: false,
            required: ['operationId'],
            properties: {
              operationId: { type: 'string' },
              role: { type: 'string' },
              params: { type: 'object' },
              query: { type: 'object' },
              headers: { type: 'object' },
              auth: { type: 'boolean' },
              body: {},
              bodyExample: { type: 'string' },
              contentType: { type: 'string' },
              rawBody: {
                oneOf: [
                  { type: 'string' },
                  {
                    type: 'object',
                    additionalProperties: false,
                    required: ['fill', 'bytes'],
                    properties: { fill: { type: 'string', minLength: 1 }, bytes: { type: ['integer', 'string'] } },
                  },
                ],
              },
            },
          },
          repeat: { type: ['integer', 'string'] },
          concurrently: { type: ['integer', 'string'] },
          poll: {
            type: 'object',
            additionalProperties: false,
            required: ['every', 'max', 'while'],
            properties: { every: { type: ['integer', 'string'] }, max: { type: ['integer', 'string'] }, while: { $ref: '#/$defs/expect' } },
          },
          expect: { $ref: '#/$defs/expect' },
          capture: {
            type: 'object',
            additionalProperties: {
              oneOf: [
                { $ref: '#/$defs/captureFrom' },
                {
                  type: 'object',
                  additionalProperties: false,
                  required: ['from', 'match'],
                  properties: { from: { $ref: '#/$defs/captureFrom' }, match: { type: 'string' } },
                },
              ],
            },
          },
          assert: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['equal'],
              properties: { equal: { type: 'array', minItems: 2, maxItems: 2 } },
            },
          },
        },
        oneOf: [{ required: ['request'] }, { required: ['assert'] }],
      },
    },
  },
};

/** Reads one scenario file, refused with every problem and its JSON pointer. */
export function loadScenario(path: string): LoadedScenario {
  const scenario = readDataFile<Scenario>(path, SCENARIO_SCHEMA);
  return { ...scenario, file: basename(path) };
}

/** Every scenario of a directory, by file name. */
export function loadScenarios(dir = SCENARIOS_DIR): LoadedScenario[] {
  return readdirSync(dir)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort()
    .map((f) => loadScenario(join(dir, f)));
}
