import { createResponseChecker, type ResponseChecker } from '../src/lib/contract/response-check.ts';
import { createSpecValidator } from '../src/lib/spec-ajv.ts';
import {
  INTERFACES,
  listOperations,
  loadSpec,
  type InterfaceName,
  type OpenApiDocument,
  type OperationEntry,
} from '../src/lib/spec-catalog.ts';

export type SpecValidator = ReturnType<typeof createSpecValidator>;

/** One interface as the engine uses it: its document, operations, response checker and schema validator. */
export type LoadedSpec = {
  name: InterfaceName;
  document: OpenApiDocument;
  operations: OperationEntry[];
  checkResponse: ResponseChecker;
  validator: SpecValidator;
};

/** An operation with the spec it belongs to. */
export type SpecOperation = { spec: LoadedSpec; op: OperationEntry };

/** The pseudo operation of `x-portolan-gateway-responses` (rate-limit spec): answers any gateway request may get. */
export const GATEWAY_RESPONSES = 'x-portolan-gateway-responses';

export type SpecSet = {
  specs: LoadedSpec[];
  /** Every loaded spec by name (all eight are always loaded: scenarios and gateway responses need them). */
  byName: Map<InterfaceName, LoadedSpec>;
  find(operationId: string): SpecOperation | undefined;
  /** The gateway responses as an operation of the rate-limit spec, checkable with its checker. */
  gateway: SpecOperation | undefined;
};

/** Loads every spec once: documents, operations, response checkers (header values checked too) and validators. */
export function loadSpecSet(): SpecSet {
  const specs = INTERFACES.map(({ name }): LoadedSpec => {
    const document = loadSpec(name);
    const validator = createSpecValidator(document, `conformance-${name}`);
    return {
      name,
      document,
      operations: listOperations(document),
      checkResponse: createResponseChecker(document, { headerValues: true, validator }),
      validator,
    };
  });
  const byName = new Map(specs.map((s) => [s.name, s]));
  const index = new Map(specs.flatMap((spec) => spec.operations.map((op) => [op.operationId, { spec, op }] as const)));
  const rateLimit = byName.get('rate-limit');
  const responses = rateLimit?.document[GATEWAY_RESPONSES] as Record<string, unknown> | undefined;
  const gateway =
    rateLimit && responses
      ? {
          spec: rateLimit,
          op: { operationId: GATEWAY_RESPONSES, method: 'get' as const, path: '/', operation: { responses }, roles: ['gateway'] },
        }
      : undefined;
  return { specs, byName, find: (operationId) => index.get(operationId), gateway };
}
