import { ROLE_NAMES } from '../src/lib/roles.ts';

/**
 * Where Prism 5.16.0 answers differently from the specs, found by sweeping every operation
 * (mocks/prism-mocks.test.ts). The test asserts these exactly, so a Prism upgrade or a spec change
 * that removes or adds one makes it fail instead of passing silently.
 * Keys: `<role> <operationId> <Accept sent>`; values: why, and the violations the response checker reports.
 */
export type PrismDeviation = { why: string; violations: string[] };

/** Serving the named examples (the default): every answer conforms. */
export const PRISM_STATIC_DEVIATIONS: Readonly<Record<string, PrismDeviation>> = {};

/**
 * The seed of the dynamic sweep. Prism re-seeds its generator per request, so one seed gives one
 * answer per request; this one was picked because it shows both kinds of dynamic deviation.
 */
export const PRISM_DYNAMIC_SEED = 'health-4';

const DEPLOYED_DECLARATION: PrismDeviation = {
  why:
    'DeployedDeclaration is anyOf [Declaration, {type: object, maxProperties: 0}]. json-schema-faker (Prism --dynamic) ' +
    'takes the open-object branch, ignores maxProperties: 0 and fills it with random members, so the body matches neither branch.',
  violations: [
    "body /declaration: must have required property 'class'",
    "body /declaration: must have required property 'schemaVersion'",
    'body /declaration/Excepteur_3e: must be object',
    'body /declaration: must NOT have more than 0 properties',
    'body /declaration: must match a schema in anyOf',
  ],
};

const HEALTH: PrismDeviation = {
  why:
    'Health ties its fields to `status` with allOf/if/then/else (message only on error; healthy means connected and ' +
    'available; unhealthy means one of them failed). json-schema-faker ignores if/then/else, so each field is drawn on its ' +
    'own: here status unhealthy with database connected, services available and a message.',
  violations: [
    'body : must NOT be valid',
    'body : must match "else" schema',
    'body : must NOT be valid',
    'body : must match "then" schema',
  ],
};

/** Generated answers (`Prefer: dynamic=true`, or `--dynamic`, with `--seed health-4`). */
export const PRISM_DYNAMIC_DEVIATIONS: Readonly<Record<string, PrismDeviation>> = {
  'device deleteDeclaration */*': DEPLOYED_DECLARATION,
  'device deleteTenantDeclaration */*': DEPLOYED_DECLARATION,
  'device patchDeclaration */*': DEPLOYED_DECLARATION,
  'device deleteApplication */*': DEPLOYED_DECLARATION,
  ...Object.fromEntries(ROLE_NAMES.map((role) => [`${role} getHealth */*`, HEALTH])),
};
