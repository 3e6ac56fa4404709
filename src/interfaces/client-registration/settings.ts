import type { Setting, SettingsValues } from '../../lib/config.ts';

/** What the derived registration host is before a gateway port of 0 is known (system.ts puts the real port in). */
export const DERIVED_FROM_PORT_ZERO = 'localhost:0';

/** Client registration's settings (D), declared beside it; the composition root adds them to the configuration. */
export const REGISTRATION_SETTINGS = [
  {
    key: 'registrationPath',
    env: 'PORTOLAN_REGISTRATION_PATH',
    schema: { type: 'string', pattern: '^(?!/(?:docs|openapi|metrics)(?:/|$))/[^?#\\s]*$', maxLength: 1024 },
    patternHint: 'must be a path (starting with /, no query or spaces) not under /docs, /openapi or /metrics',
    default: '/vendor-oauth2/v1/client-register',
    description: 'Path of the client-registration endpoint (D); not under /docs, /openapi or /metrics, which every role answers itself.',
  },
  {
    key: 'registrationHost',
    env: 'PORTOLAN_REGISTRATION_HOST',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
    default: 'localhost:8080',
    derive: (values) => `localhost:${String(values.get('ports.gateway'))}`,
    description: "Host header value of registration requests (D); when unset, localhost:<the gateway's port>.",
  },
  {
    key: 'registrationAccessProfile',
    env: 'PORTOLAN_REGISTRATION_ACCESS_PROFILE',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
    default: 'registration_check',
    description: 'Access profile that checks the registering user (D; users added with `portolan users add --profile`).',
  },
  {
    key: 'registrationPartition',
    env: 'PORTOLAN_REGISTRATION_PARTITION',
    schema: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[^~/]+$' },
    default: 'Common',
    description: 'Partition of the OAuth profile and access policy (D).',
  },
  {
    key: 'registrationOauthProfile',
    env: 'PORTOLAN_REGISTRATION_OAUTH_PROFILE',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^~/]+$' },
    default: 'oauth_server',
    description: 'OAuth profile new client applications are bound to (D).',
  },
  {
    key: 'registrationScopes',
    env: 'PORTOLAN_REGISTRATION_SCOPES',
    schema: { type: 'string', maxLength: 1024 },
    default: 'openid profile',
    description: 'Scopes of the created client applications (D).',
  },
  {
    key: 'registrationAccessPolicy',
    env: 'PORTOLAN_REGISTRATION_ACCESS_POLICY',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^~/]+$' },
    default: 'oauth_access_policy',
    description: 'Access policy re-applied after a binding (D).',
  },
  {
    key: 'registrationStaticCredentials',
    env: 'PORTOLAN_REGISTRATION_STATIC_CREDENTIALS',
    schema: { type: 'boolean' },
    default: false,
    description: 'Answer the static client id and secret and create nothing (D).',
  },
  {
    key: 'registrationStaticClientId',
    env: 'PORTOLAN_REGISTRATION_STATIC_CLIENT_ID',
    schema: { type: 'string', maxLength: 1024 },
    default: '',
    description: 'Static client_id (D; required when static credentials are on).',
  },
  {
    key: 'registrationStaticClientSecret',
    env: 'PORTOLAN_REGISTRATION_STATIC_CLIENT_SECRET',
    schema: { type: 'string', maxLength: 1024 },
    default: '',
    description: 'Static client_secret (D; required when static credentials are on).',
    secret: true,
  },
  {
    key: 'registrationSessionTimeoutSeconds',
    env: 'PORTOLAN_REGISTRATION_SESSION_TIMEOUT_SECONDS',
    schema: { type: 'integer', minimum: 1, maximum: 86_400 },
    default: 300,
    description: 'Idle timeout of a registration connection, in seconds (D).',
  },
  {
    key: 'registrationSessionLifetimeSeconds',
    env: 'PORTOLAN_REGISTRATION_SESSION_LIFETIME_SECONDS',
    schema: { type: 'integer', minimum: 1, maximum: 86_400 },
    default: 300,
    description: 'Longest life of a registration connection, in seconds (D).',
  },
  {
    key: 'registrationMaxBodyBytes',
    env: 'PORTOLAN_REGISTRATION_MAX_BODY_BYTES',
    schema: { type: 'integer', minimum: 1, maximum: 1024 ** 3 },
    default: 1048576,
    description: 'Largest registration body, by Content-Length; larger ones get 413 (D).',
  },
  {
    key: 'managementUrl',
    env: 'PORTOLAN_MANAGEMENT_URL',
    schema: { type: 'string', pattern: '^(https?://[^\\s]+)?$' },
    default: '',
    description: 'Device management interface registration calls (D); empty: the device role of this process.',
  },
] as const satisfies readonly Setting[];

export type RegistrationConfig = SettingsValues<typeof REGISTRATION_SETTINGS>;
