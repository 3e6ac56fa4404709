import type { Setting, SettingsValues } from '../../lib/config.ts';

/** Access sessions' settings (H) and the authorization request they redirect to. */
export const ACCESS_SESSION_SETTINGS = [
  {
    key: 'accessSessionLifetimeSeconds',
    env: 'PORTOLAN_ACCESS_SESSION_LIFETIME_SECONDS',
    schema: { type: 'integer', minimum: 1, maximum: 86_400 },
    default: 300,
    description: 'Lifetime of an access session from its creation, in seconds (H).',
  },
  {
    key: 'accessSessionMaxTokenLength',
    env: 'PORTOLAN_ACCESS_SESSION_MAX_TOKEN_LENGTH',
    schema: { type: 'integer', minimum: 16, maximum: 65_536 },
    default: 16384,
    description: 'Longest identity token the jwt-parse agent accepts, in characters (H).',
  },
  {
    key: 'authorizationUrl',
    env: 'PORTOLAN_AUTHORIZATION_URL',
    schema: { type: 'string', pattern: '^https?://[^\\s#]+$', maxLength: 2048 },
    default: 'https://login.example.com/common/oauth2/v2.0/authorize',
    description: 'Identity-provider authorization URL of the login_hint redirect (H; no fragment).',
  },
  {
    key: 'authorizationClientId',
    env: 'PORTOLAN_AUTHORIZATION_CLIENT_ID',
    schema: { type: 'string', minLength: 1, maxLength: 1024 },
    default: 'portolan-gateway',
    description: 'client_id of the authorization request (H).',
  },
  {
    key: 'authorizationRedirectUri',
    env: 'PORTOLAN_AUTHORIZATION_REDIRECT_URI',
    schema: { type: 'string', pattern: '^https?://[^\\s#]+$', maxLength: 2048 },
    default: 'https://localhost:8080/oauth/client/redirect',
    description: 'redirect_uri of the authorization request (H).',
  },
  {
    key: 'authorizationScope',
    env: 'PORTOLAN_AUTHORIZATION_SCOPE',
    schema: { type: 'string', minLength: 1, maxLength: 1024 },
    default: 'openid profile',
    description: 'scope of the authorization request (H; space-separated).',
  },
] as const satisfies readonly Setting[];

export type AccessSessionConfig = SettingsValues<typeof ACCESS_SESSION_SETTINGS>;
