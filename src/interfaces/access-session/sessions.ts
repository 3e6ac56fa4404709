/**
 * Access sessions of the gateway: their lifetime, the seed's jwt-parse agent run on them and the
 * authorization redirect built from them. Expected failures are registry values; the handlers refuse with them.
 */
import type { Clock } from '../../lib/clock.ts';
import { fail, ok, type ErrorCode, type PortolanError, type Result } from '../../lib/errors.ts';
import { createAuthorizationRequest, type AuthorizationRequestSettings, type Prompt } from './authorization-redirect.ts';
import { parseIdentityToken } from './jwt-parse.ts';
import type { AccessSessionRecord, AccessSessionStore } from './store.ts';
import { ID_TOKEN, USER_PRINCIPAL_NAME, type SessionVariables } from './variables.ts';

export type AccessSessionSettings = {
  /** How long a session lives from its creation, in seconds. */
  lifetimeSeconds: number;
  /** Longest identity token the jwt-parse agent accepts, in characters. */
  maxTokenLength: number;
  authorization: AuthorizationRequestSettings;
};

export type AccessSessionsDependencies = {
  store: AccessSessionStore;
  clock: Clock;
  settings: AccessSessionSettings;
  /** A new, unguessable session id (`[A-Za-z0-9_-]{1,64}`). */
  newSessionId: () => string;
  /** A fresh random `state` for each authorization redirect. */
  newState: () => string;
  /** Expired rows are swept on a create at most this often (default 60 s); reads never see them anyway. */
  sweepIntervalMs?: number;
};

/** The session domain's expected failures: codes of the one registry (src/lib/errors.ts). */
export type FailureKind = Extract<ErrorCode, 'sessionNotFound' | 'missingSessionVariable' | 'invalidToken'>;
export type SessionFailure<K extends FailureKind = FailureKind> = PortolanError & { code: K };

/** A result, or one of the expected failures `K` the operation can meet. */
export type Outcome<T, K extends FailureKind> = Result<T, SessionFailure<K>>;

const failure = <K extends FailureKind>(code: K, message: string) => fail<SessionFailure<K>>({ code, message });
const notFound = (id: string) => failure('sessionNotFound', `no access session ${id} (unknown or expired)`);
const missing = (name: string, id: string) => failure('missingSessionVariable', `${name} is not set in session ${id}`);

export function createAccessSessions({
  store,
  clock,
  settings,
  newSessionId,
  newState,
  sweepIntervalMs = 60_000,
}: AccessSessionsDependencies) {
  let lastSweepMs = Number.NEGATIVE_INFINITY;
  const redirectTo = createAuthorizationRequest(settings.authorization);

  const live = async (id: string): Promise<Outcome<AccessSessionRecord, 'sessionNotFound'>> => {
    const session = await store.get(id, clock.nowMs());
    return session ? ok(session) : notFound(id);
  };

  return {
    /** Creates a session holding `variables`; it lives `lifetimeSeconds` from now. */
    async create(variables: SessionVariables): Promise<AccessSessionRecord> {
      const now = clock.nowMs();
      if (now - lastSweepMs >= sweepIntervalMs) {
        lastSweepMs = now;
        await store.deleteExpired(now);
      }
      const session = { id: newSessionId(), createdMs: now, expiresMs: now + settings.lifetimeSeconds * 1000, variables };
      await store.create(session);
      return session;
    },

    get: live,

    async delete(id: string): Promise<Outcome<void, 'sessionNotFound'>> {
      return (await store.delete(id, clock.nowMs())) ? ok(undefined) : notFound(id);
    },

    /**
     * The seed's jwt-parse agent: parses the session's identity token and sets the variables it
     * yields (overwriting an earlier run's, keeping every other). A malformed token sets nothing.
     */
    async runJwtParse(id: string): Promise<Outcome<SessionVariables, FailureKind>> {
      const session = await live(id);
      if (!session.ok) return session;
      const token = session.value.variables[ID_TOKEN];
      if (token === undefined) return missing(ID_TOKEN, id);
      const parsed = parseIdentityToken(token, { maxTokenLength: settings.maxTokenLength });
      if (!parsed.ok) return failure('invalidToken', parsed.message);
      const updated = await store.setVariables(id, clock.nowMs(), parsed.variables);
      return updated ? ok(parsed.variables) : notFound(id);
    },

    /**
     * The seed's custom authorization request: the redirect URL with `login_hint` = the session's
     * user principal name. An absent or empty name means the directory query has not run.
     */
    async authorizationRedirect(id: string, prompt?: Prompt): Promise<Outcome<string, 'sessionNotFound' | 'missingSessionVariable'>> {
      const session = await live(id);
      if (!session.ok) return session;
      const loginHint = session.value.variables[USER_PRINCIPAL_NAME];
      if (loginHint === undefined) return missing(USER_PRINCIPAL_NAME, id);
      if (loginHint === '') return failure('missingSessionVariable', `${USER_PRINCIPAL_NAME} is empty in session ${id}`);
      return ok(redirectTo({ loginHint, state: newState(), prompt }));
    },
  };
}

export type AccessSessions = ReturnType<typeof createAccessSessions>;
