import { randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import type { AccessSessionConfig as Config } from './settings.ts';
import type { Database } from '../../stores/database.ts';
import type { AccessSessionDependencies } from './handlers.ts';
import { createAccessSessions } from './sessions.ts';
import { createSqlAccessSessionStore } from './store.ts';

export type AccessSessionWiring = {
  database: Database;
  config: Config;
  clock: Clock;
  /** Replace the random session ids and states (tests); by default 128 random bits each. */
  newSessionId?: () => string;
  newState?: () => string;
};

/**
 * Builds interface H's handler dependencies from the composition root's parts. Session ids and
 * states are 128 random bits: a session id must not be guessable from another one, and a state
 * must be unpredictable to protect the redirect (RFC 6749 section 10.12).
 *
 * @example
 * accessSession: createAccessSessionDependencies({ database, config, clock })
 */
export function createAccessSessionDependencies(wiring: AccessSessionWiring): AccessSessionDependencies {
  const { config } = wiring;
  return {
    sessions: createAccessSessions({
      store: createSqlAccessSessionStore(wiring.database),
      clock: wiring.clock,
      newSessionId: wiring.newSessionId ?? (() => randomBytes(16).toString('hex')),
      newState: wiring.newState ?? (() => randomBytes(16).toString('base64url')),
      settings: {
        lifetimeSeconds: config.accessSessionLifetimeSeconds,
        maxTokenLength: config.accessSessionMaxTokenLength,
        authorization: {
          authorizationUrl: config.authorizationUrl,
          clientId: config.authorizationClientId,
          redirectUri: config.authorizationRedirectUri,
          scope: config.authorizationScope,
        },
      },
    }),
  };
}
