import { createSpecValidator } from '../../../lib/spec-ajv.ts';
import { loadSpec } from '../../../lib/spec-catalog.ts';

/** The device-config spec, its schemas, and the examples the declaration tests follow. */
export const spec = loadSpec('device-config');
export const schemaAt = createSpecValidator(spec).at;

type Examples = Record<string, { value: unknown }>;
const operation = (spec.paths['/mgmt/shared/appsvcs/declare'] as Record<string, any>).post;
const infoOperation = (spec.paths['/mgmt/shared/appsvcs/info'] as Record<string, any>).get;

/** `deployDeclaration`'s request examples by name. */
export const requestExamples = operation.requestBody.content['application/json'].examples as Examples;
/** `deployDeclaration`'s response examples by status and name. */
export const responseExample = (status: string, name: string) =>
  (operation.responses[status].content['application/json'].examples as Examples)[name]!.value as any;
/** The accepted `schemaVersion` range, from the `/info` example. */
export const info = Object.values(infoOperation.responses['200'].content['application/json'].examples as Examples)[0]!.value as {
  schemaMinimum: string;
  schemaCurrent: string;
};
/** A schema of the spec by name. */
export const schemaOf = (name: string) => (spec.components!.schemas as Record<string, any>)[name];

/** A request example's declaration (the body itself for a bare one). */
export const declarationOf = (name: string): Record<string, any> => {
  const body = requestExamples[name]!.value as Record<string, any>;
  return body.class === 'AS3' ? body.declaration : body;
};
