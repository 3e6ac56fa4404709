import OpenAPIBackendModule from 'openapi-backend';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { Operation } from 'openapi-backend';
import addFormatsModule from 'ajv-formats';
import { listOperations, loadSpec, type InterfaceName, type OpenApiDocument, type OperationEntry } from '../lib/spec-catalog.ts';

const { OpenAPIBackend } = OpenAPIBackendModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;
const OPENAPI_FORMATS = ['binary', 'byte', 'int32', 'int64', 'float', 'double', 'password'];

/** One interface's contract, loaded and compiled once: its operations and request validators. */
export type InterfaceRuntime = {
  name: InterfaceName;
  document: OpenApiDocument;
  operations: readonly RuntimeOperation[];
  /** Validates a parsed request against one operation; returns readable problems, [] when valid. */
  validateRequest(operation: RuntimeOperation, request: ValidatableRequest): string[];
};

export type RuntimeOperation = OperationEntry & { interfaceName: InterfaceName; backendOperation: Operation };

export type ValidatableRequest = {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  body: unknown;
};

// A runtime is immutable once built (no handlers live in it), so every system of a process shares one
// per spec: tests and embedders that start several systems compile each spec once.
const loaded = new Map<InterfaceName, Promise<InterfaceRuntime>>();

/** The runtime of a spec, built on first use and shared after (a failed build is retried next time). */
export function loadInterfaceRuntime(name: InterfaceName): Promise<InterfaceRuntime> {
  let runtime = loaded.get(name);
  if (!runtime) {
    runtime = buildInterfaceRuntime(name);
    loaded.set(name, runtime);
    runtime.catch(() => loaded.delete(name));
  }
  return runtime;
}

/** Loads a spec and builds its openapi-backend instance with request validation on. */
async function buildInterfaceRuntime(name: InterfaceName): Promise<InterfaceRuntime> {
  const document = loadSpec(name);
  // Dereference up front and copy through JSON so no two places share one object: openapi-backend's
  // `decycle` turns every repeated object into a `$ref` to its first place, which breaks schemas that
  // reuse a component (a shared `enum` array became `{$ref}`).
  const dereferenced = JSON.parse(JSON.stringify(await SwaggerParser.dereference(structuredClone(document) as never)));
  const backend = new OpenAPIBackend({
    definition: dereferenced,
    validate: true,
    strict: true,
    ajvOpts: { strict: false, allErrors: true },
    customizeAjv: (ajv) => {
      addFormats(ajv);
      for (const format of OPENAPI_FORMATS) ajv.addFormat(format, true);
      return ajv;
    },
  });
  // openapi-backend 5 checks every document against the OpenAPI 3.0 meta-schema, which refuses 3.1
  // (info.summary, const, type arrays...). The specs are validated as 3.1 by swagger-parser in the
  // spec tests, so that check is switched off here rather than loosening strict mode.
  backend.validateDefinition = () => backend.document;
  await backend.init();
  // Resolve each operation object once: openapi-backend rebuilds its operation list on every lookup.
  const backendOperations = new Map(backend.getOperations().map((op: Operation) => [op.operationId, op]));
  const operations = listOperations(document).map((entry) => {
    const backendOperation = backendOperations.get(entry.operationId);
    if (!backendOperation) throw new Error(`${name}: operation ${entry.operationId} missing after dereferencing`);
    return { ...entry, interfaceName: name, backendOperation };
  });
  return {
    name,
    document,
    operations,
    validateRequest(operation, request) {
      const result = backend.validateRequest(request as never, operation.backendOperation as never);
      return (result.errors ?? []).map((e) => {
        const where = e.instancePath ? e.instancePath.replace(/^\/requestBody/, 'body').replace(/^\//, '').replaceAll('/', '.') : 'request';
        const allowed = e.keyword === 'enum' ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')})` : '';
        const extra = e.keyword === 'additionalProperties' ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'` : '';
        return `${where} ${e.message}${extra}${allowed}`;
      });
    },
  };
}
