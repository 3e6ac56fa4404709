import OpenAPIBackendModule from 'openapi-backend';
import type { Operation } from 'openapi-backend';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { listOperations, type InterfaceName, type OpenApiDocument, type OperationEntry } from '../lib/spec-catalog.ts';
import { dereferenceDocument, readCompiledContract } from './compiled-contract.ts';
import { operationBodyPolicy, type BodyPolicy } from './body-policy.ts';
import { operationSecurity, type SecurityRequirement } from './security.ts';

const { OpenAPIRouter, OpenAPIValidator } = OpenAPIBackendModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;
const OPENAPI_FORMATS = ['binary', 'byte', 'int32', 'int64', 'float', 'double', 'password'];

/** One interface's contract, loaded and compiled once: its operations, their policies and validators. */
export type InterfaceRuntime = {
  /** The interface's name (a spec of the project's catalogue, or a module's own). */
  name: string;
  /** The document as written (with its `$ref`s). */
  document: OpenApiDocument;
  operations: readonly RuntimeOperation[];
};

/** An operation with everything the request path needs, decided once from the spec. */
export type RuntimeOperation = OperationEntry & {
  interfaceName: string;
  /** Alternatives (any one suffices) of schemes that must all pass; [] or one empty alternative: open. */
  security: readonly SecurityRequirement[];
  body: BodyPolicy;
  /** Query parameters declared as arrays: a single value is validated and handed over as a one-item array. */
  arrayQueryParameters: ReadonlySet<string>;
  /** Whether any parameter or scheme reads cookies (only then are they parsed). */
  readsCookies: boolean;
  /** openapi-backend's compiled request validators (body, then parameters), compiled on first use. */
  validators(): readonly ValidateFunction[];
};

// A runtime is immutable once built (no handlers live in it), so every system of a process shares one
// per spec: tests and embedders that start several systems compile each spec once.
const loaded = new Map<InterfaceName, Promise<InterfaceRuntime>>();

/**
 * The runtime of a spec, built on first use from its compiled contract (generated/<name>/contract.gen.json,
 * no YAML parsing or $ref resolution) and shared after; a failed build is retried next time. Rejects with a
 * StaleContractError, saying to run `npm run generate`, when the spec changed since it was compiled.
 */
export function loadInterfaceRuntime(name: InterfaceName): Promise<InterfaceRuntime> {
  let runtime = loaded.get(name);
  if (!runtime) {
    runtime = (async () => {
      const contract = readCompiledContract(name);
      return runtimeOf(name, contract.document, contract.dereferenced);
    })();
    loaded.set(name, runtime);
    runtime.catch(() => loaded.delete(name));
  }
  return runtime;
}

/** The runtime of a spec outside the catalogue (a test fixture's), compiled from its YAML file. */
export async function buildInterfaceRuntimeFromFile(name: string, specFile: string): Promise<InterfaceRuntime> {
  const { parse } = await import('yaml');
  return buildInterfaceRuntime(name, parse(readFileSync(specFile, 'utf8')) as OpenApiDocument);
}

/** The runtime of a written document (with `$ref`s), dereferenced here; the catalogue's specs come compiled. */
export async function buildInterfaceRuntime(name: string, document: OpenApiDocument): Promise<InterfaceRuntime> {
  return runtimeOf(name, document, await dereferenceDocument(document));
}

/**
 * Builds openapi-backend's router and validator over the dereferenced document: they hold the operations
 * and compile their request validators, which the role app calls with the request it parsed once.
 * openapi-backend's own routing and request parsing are not used on the hot path (find-my-way routes; see
 * role-app.ts); its validators are compiled lazily, on one ajv instance per validation context instead of
 * one per schema. `dereferenced` must share no object between two places (see CompiledContract).
 */
function runtimeOf(name: string, document: OpenApiDocument, dereferenced: OpenApiDocument): InterfaceRuntime {
  const sharedAjv = new Map<string, Parameters<typeof addFormats>[0]>();
  // Router and validator without OpenAPIBackend's init: the document is already dereferenced and checked
  // (as 3.1, by the spec tests), and init would still parse it with json-schema-ref-parser and deep-copy it
  // with its own dereferencer (about 40 ms a start for nothing). Lazy: validators compile when first needed.
  const router = new OpenAPIRouter({ definition: dereferenced as never });
  const validator = new OpenAPIValidator({
    definition: dereferenced as never,
    router,
    lazyCompileValidators: true,
    // The specs' schemas are linted (npm run lint:specs): not checked against the meta-schema again at the first validation (~20 ms a spec).
    ajvOpts: { strict: false, allErrors: true, validateSchema: false },
    customizeAjv: (ajv, options, context) => {
      const key = `${context}:${Boolean((options as { coerceTypes?: boolean }).coerceTypes)}`;
      const shared = sharedAjv.get(key);
      if (shared) return shared;
      addFormats(ajv);
      for (const format of OPENAPI_FORMATS) ajv.addFormat(format, true);
      sharedAjv.set(key, ajv);
      return ajv;
    },
  });
  const backendOperations = new Map(router.getOperations().map((op: Operation) => [op.operationId, op]));
  // Entries keep the written operation objects (readers such as the response checker follow their
  // `$ref`s by pointer); the policies are read from the dereferenced ones.
  const operations = listOperations(document).map((entry): RuntimeOperation => {
    const backendOperation = backendOperations.get(entry.operationId);
    if (!backendOperation) throw new Error(`${name}: operation ${entry.operationId} missing after dereferencing`);
    const resolved = backendOperation as unknown as Record<string, unknown>;
    const parameters = (backendOperation.parameters ?? []) as { in: string; name: string; schema?: { type?: unknown } }[];
    const security = operationSecurity(dereferenced, resolved);
    let validators: readonly ValidateFunction[] | undefined;
    return {
      ...entry,
      interfaceName: name,
      security,
      body: operationBodyPolicy(resolved),
      arrayQueryParameters: new Set(parameters.filter((p) => p.in === 'query' && p.schema?.type === 'array').map((p) => p.name)),
      readsCookies: parameters.some((p) => p.in === 'cookie') || security.some((r) => r.some((s) => s.in === 'cookie')),
      validators: () => (validators ??= validator.getRequestValidatorsForOperation(entry.operationId) ?? []),
    };
  });
  return { name, document, operations };
}
