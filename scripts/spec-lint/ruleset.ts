import spectralRulesets from '@stoplight/spectral-rulesets';
import spectralFunctions from '@stoplight/spectral-functions';
import type { RulesetDefinition, IFunctionResult } from '@stoplight/spectral-core';
import { isObject, resolveRef } from '../../src/lib/contract/json-pointer.ts';

const { oas } = spectralRulesets;
const { truthy, pattern, enumeration } = spectralFunctions;

const OPERATIONS = '$.paths[*][get,put,post,delete,options,head,patch,trace]';
export const ROLES = ['gateway', 'mapping', 'device', 'central', 'diagnostics', 'login'];

/**
 * Every 4xx/5xx response (inline or by $ref) has content, and each media type's schema is a $ref to one
 * of the document's `x-portolan-error-schemas`. Runs on the unresolved document to see the $refs.
 */
function errorResponsesUseErrorSchema(doc: unknown): IFunctionResult[] {
  if (!isObject(doc)) return [];
  const allowed = Array.isArray(doc['x-portolan-error-schemas'])
    ? (doc['x-portolan-error-schemas'] as string[]).map((n) => `#/components/schemas/${n}`)
    : [];
  if (allowed.length === 0) {
    return [{ message: 'the document declares no x-portolan-error-schemas', path: [] }];
  }
  const results: IFunctionResult[] = [];
  const checkResponses = (responses: unknown, base: (string | number)[]) => {
    if (!isObject(responses)) return;
    for (const [code, raw] of Object.entries(responses)) {
      if (!/^[45]/.test(code)) continue;
      const response = resolveRef(doc, raw);
      const path = [...base, code];
      if (!isObject(response) || !isObject(response.content) || Object.keys(response.content).length === 0) {
        results.push({ message: `${code} response has no content in the interface's error shape`, path });
        continue;
      }
      for (const [mediaType, media] of Object.entries(response.content)) {
        const ref = isObject(media) && isObject(media.schema) ? media.schema.$ref : undefined;
        if (typeof ref !== 'string' || !allowed.includes(ref)) {
          results.push({
            message: `${code} ${mediaType} schema must be a $ref to one of ${allowed.join(', ')}`,
            path: [...path, 'content', mediaType, 'schema'],
          });
        }
      }
    }
  };
  for (const [p, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(item)) continue;
    for (const [method, op] of Object.entries(item)) {
      if (isObject(op) && isObject(op.responses)) checkResponses(op.responses, ['paths', p, method, 'responses']);
    }
  }
  return results;
}

/** The project's own rules on top of Spectral's `oas` ruleset (see specs/CONVENTIONS.md). */
export const ruleset: RulesetDefinition = {
  extends: [[oas as RulesetDefinition, 'recommended']],
  rules: {
    'oas3-unused-component': 'error',
    // Media examples are checked by examples.ts instead, which knows that XML, PDF and CSV examples
    // are strings and lists every error of a JSON example (Spectral checks them all as JSON).
    'oas3-valid-media-example': 'off',
    'operation-operationId': 'error',
    'operation-tags': 'error',
    'operation-tag-defined': 'error',
    'portolan-operation-id-camel-case': {
      description: 'operationId is camelCase verb-noun: it becomes the SDK function name.',
      severity: 'error',
      given: OPERATIONS,
      then: { field: 'operationId', function: pattern, functionOptions: { match: '^[a-z]+[A-Z][A-Za-z0-9]*$' } },
    },
    'portolan-operation-summary': {
      description: 'Every operation has a summary.',
      severity: 'error',
      given: OPERATIONS,
      then: { field: 'summary', function: truthy },
    },
    'portolan-server-role': {
      description: 'Every server names the Portolan role that serves it (x-portolan-role).',
      severity: 'error',
      given: ['$.servers[*]', '$.paths[*].servers[*]', `${OPERATIONS}.servers[*]`],
      then: { field: 'x-portolan-role', function: enumeration, functionOptions: { values: ROLES } },
    },
    'portolan-interface-letter': {
      // One capital letter; that no two specs share one is checked across specs/ (readSpecCatalog, lint-specs.ts).
      description: "info.x-interface is the interface's letter: one capital, A to Z (the seed's sections are A to H).",
      severity: 'error',
      given: '$.info',
      then: { field: 'x-interface', function: pattern, functionOptions: { match: '^[A-Z]$' } },
    },
    'portolan-error-schema': {
      description: "Every 4xx/5xx response uses that interface's error schema (x-portolan-error-schemas).",
      message: '{{error}}',
      severity: 'error',
      given: '$',
      resolved: false,
      then: { function: errorResponsesUseErrorSchema },
    },
  },
};
