// The catalogue of spec-diff checks: every kind of change the differ reports has a stable id (shown in the
// output, used as the key of a severity override in the config file), a default severity and one line
// saying what it finds. "request" is what clients send (request bodies and parameters), "response" what
// they read (response bodies and headers). docs/spec-diff.md lists this table (a test holds it to it).

/** How much a change matters to a client: breaking needs a major version bump; warning may break; info does not. */
export type Severity = 'breaking' | 'warning' | 'info';

/** The severities in order, most severe first. */
export const SEVERITIES: readonly Severity[] = ['breaking', 'warning', 'info'];

type Check = { severity: Severity; description: string };

/** Every check: id -> default severity and description, in the order the docs list them. */
export const CHECKS = {
  // Operations
  'operation-removed': { severity: 'breaking', description: 'an operation was removed' },
  'operation-added': { severity: 'info', description: 'an operation was added' },
  'operation-id-changed': { severity: 'breaking', description: "an operation's operationId changed (the SDK function is renamed)" },
  'operation-description-changed': { severity: 'info', description: "an operation's summary or description changed" },
  'path-parameter-renamed': { severity: 'info', description: 'a path parameter was renamed at the same position (the URLs are the same)' },
  'security-requirement-added': { severity: 'breaking', description: 'credentials a client sent before are no longer enough' },
  'security-alternative-added': { severity: 'info', description: 'other credentials are now accepted too' },
  // Parameters
  'parameter-removed': { severity: 'breaking', description: 'a parameter was removed (the server no longer accepts it)' },
  'required-parameter-added': { severity: 'breaking', description: 'a required parameter was added' },
  'optional-parameter-added': { severity: 'info', description: 'an optional parameter was added' },
  'parameter-became-required': { severity: 'breaking', description: 'an optional parameter became required' },
  'parameter-became-optional': { severity: 'info', description: 'a required parameter became optional' },
  'parameter-description-changed': { severity: 'info', description: "a parameter's description changed" },
  // Request bodies
  'request-body-removed': { severity: 'breaking', description: 'the request body was removed (the server no longer accepts one)' },
  'required-request-body-added': { severity: 'breaking', description: 'a required request body was added' },
  'optional-request-body-added': { severity: 'info', description: 'an optional request body was added' },
  'request-body-became-required': { severity: 'breaking', description: 'the request body became required' },
  'request-body-became-optional': { severity: 'info', description: 'the request body became optional' },
  'request-media-type-removed': { severity: 'breaking', description: 'a request media type was removed' },
  'request-media-type-added': { severity: 'info', description: 'a request media type was added' },
  // Responses
  'response-status-removed': { severity: 'breaking', description: 'a response status was removed' },
  'response-status-added': { severity: 'info', description: 'a response status was added' },
  'response-description-changed': { severity: 'info', description: "a response's description changed" },
  'response-media-type-removed': { severity: 'breaking', description: 'a response media type was removed' },
  'response-media-type-added': { severity: 'info', description: 'a response media type was added' },
  'response-header-removed': { severity: 'breaking', description: 'a response header was removed' },
  'response-header-added': { severity: 'info', description: 'a response header was added' },
  // Fields and values (schemas of bodies, parameters and headers)
  'request-field-removed': { severity: 'breaking', description: 'a request field was removed (the server no longer accepts it)' },
  'required-request-field-added': { severity: 'breaking', description: 'a required request field was added' },
  'optional-request-field-added': { severity: 'info', description: 'an optional request field was added' },
  'request-field-became-required': { severity: 'breaking', description: 'an optional request field became required' },
  'request-field-became-optional': { severity: 'info', description: 'a required request field became optional' },
  'response-field-removed': { severity: 'breaking', description: 'a response field was removed' },
  'response-field-added': { severity: 'info', description: 'a response field was added' },
  'response-field-became-optional': { severity: 'breaking', description: 'a required response field became optional (it may be absent)' },
  'response-field-became-required': { severity: 'info', description: 'an optional response field became required' },
  'request-type-changed': { severity: 'breaking', description: 'the type of a request value changed' },
  'response-type-changed': { severity: 'breaking', description: 'the type of a response value changed' },
  'request-format-changed': { severity: 'breaking', description: 'the format of a request value was added or changed' },
  'request-format-removed': { severity: 'info', description: 'the format of a request value was removed' },
  'response-format-changed': { severity: 'breaking', description: 'the format of a response value changed or was removed' },
  'response-format-added': { severity: 'info', description: 'a response value was given a format' },
  'request-null-allowed': { severity: 'info', description: 'a request value now accepts null' },
  'request-null-refused': { severity: 'breaking', description: 'a request value no longer accepts null' },
  'response-null-allowed': { severity: 'breaking', description: 'a response value may now be null' },
  'response-null-refused': { severity: 'info', description: 'a response value is no longer null' },
  'request-enum-narrowed': { severity: 'breaking', description: 'a request value accepts fewer enum values' },
  'request-enum-widened': { severity: 'info', description: 'a request value accepts more enum values' },
  'response-enum-narrowed': { severity: 'info', description: 'a response value sends fewer enum values' },
  'response-enum-widened': { severity: 'breaking', description: 'a response value may send enum values it did not before' },
  'request-constraint-narrowed': {
    severity: 'breaking',
    description: 'a request value allows fewer values (maxLength, maximum, pattern, ... tightened)',
  },
  'request-constraint-widened': { severity: 'info', description: 'a request value allows more values (a bound loosened)' },
  'response-constraint-narrowed': { severity: 'info', description: 'a response value is bounded more tightly' },
  'response-constraint-widened': {
    severity: 'warning',
    description: 'a response value may exceed its old bounds (a client relying on them may break)',
  },
  'request-additional-fields-refused': { severity: 'breaking', description: 'a request object no longer allows fields it does not list' },
  'request-additional-fields-allowed': { severity: 'info', description: 'a request object now allows fields it does not list' },
  'response-additional-fields-refused': { severity: 'info', description: 'a response object no longer sends fields it does not list' },
  'response-additional-fields-allowed': { severity: 'info', description: 'a response object may send fields it does not list' },
  'request-variant-removed': { severity: 'breaking', description: 'a oneOf/anyOf variant of a request value was removed' },
  'request-variant-added': { severity: 'info', description: 'a oneOf/anyOf variant of a request value was added' },
  'response-variant-removed': { severity: 'info', description: 'a oneOf/anyOf variant of a response value was removed' },
  'response-variant-added': { severity: 'breaking', description: 'a oneOf/anyOf variant of a response value was added' },
  'schema-description-changed': { severity: 'info', description: "a field's or value's description changed" },
  'examples-changed': { severity: 'info', description: 'the examples of a body changed' },
  // Outside operations (reported under "spec-wide")
  'api-description-changed': { severity: 'info', description: "the spec's title, summary or description changed" },
  'server-removed': { severity: 'warning', description: 'a server URL was removed from servers' },
  'server-added': { severity: 'info', description: 'a server URL was added to servers' },
  'security-scheme-changed': {
    severity: 'breaking',
    description: "a security scheme's type, scheme, header/query/cookie name or location changed",
  },
  'security-scheme-removed': { severity: 'warning', description: 'a security scheme was removed from components' },
  'security-scheme-added': { severity: 'info', description: 'a security scheme was added to components' },
  'component-schema-removed': {
    severity: 'warning',
    description: "a schema was removed from components (the SDK's type of that name is gone)",
  },
  'component-schema-added': { severity: 'info', description: 'a schema was added to components' },
} as const satisfies Record<string, Check>;

/** A check's stable id, e.g. `request-field-became-required`. */
export type CheckId = keyof typeof CHECKS;

/** Every check id, in catalogue order. */
export const CHECK_IDS = Object.keys(CHECKS) as CheckId[];

/**
 * Whether `id` names a check.
 * @example isCheckId('operation-removed') // true
 */
export const isCheckId = (id: string): id is CheckId => Object.hasOwn(CHECKS, id);
