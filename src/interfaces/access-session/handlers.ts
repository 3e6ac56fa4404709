import type * as H from '../../../generated/access-session/types.gen.ts';
import type { BasicAuthenticator } from '../../accounts/basic-auth.ts';
import type { HandlerRequest, TypedHandler } from '../../server/handler-types.ts';
import type { AccessSessionRecord } from './store.ts';
import type { AccessSessions, FailureKind, SessionFailure } from './sessions.ts';

/** `authenticate` checks an Authorization header against the gateway's administrative account. */
export type AccessSessionDependencies = { sessions: AccessSessions; authenticate: BasicAuthenticator };

const CHALLENGE = { 'www-authenticate': 'Basic realm="portolan-gateway"' };

/** Each expected failure's status and `error` in the gateway's shape (the spec's examples). */
const FAILURES = {
  notFound: { status: 404, error: 'session not found' },
  missingVariable: { status: 409, error: 'missing session variable' },
  invalidToken: { status: 400, error: 'invalid token' },
} as const;

const failure = <K extends FailureKind>({ kind, message }: SessionFailure<K>) => ({
  status: FAILURES[kind].status as (typeof FAILURES)[K]['status'],
  body: { error: FAILURES[kind].error, 'error-message': message } satisfies H.GatewayError,
});

const unauthorized = (message: string) => ({ status: 401 as const, body: { error: 'unauthorized', 'error-message': message }, headers: CHALLENGE });

const toAccessSession = (session: AccessSessionRecord): H.AccessSession => ({
  id: session.id,
  variables: session.variables,
  createdAt: new Date(session.createdMs).toISOString(),
  expiresAt: new Date(session.expiresMs).toISOString(),
});

/**
 * Interface H: the designed administrative interface of the gateway's access sessions. Thin
 * HTTP <-> domain handlers; requests arrive validated against specs/access-session.yaml, and every
 * operation first checks the administrative basic credentials.
 */
export function createAccessSessionHandlers({ sessions, authenticate }: AccessSessionDependencies) {
  /** The 401 answer when the credentials are missing or wrong; undefined when they are right. */
  const refuse = async ({ headers }: HandlerRequest<unknown, unknown, unknown>) => {
    if (headers.authorization === undefined || headers.authorization === '') return unauthorized('administrative credentials are required');
    return (await authenticate(headers.authorization)) ? undefined : unauthorized('invalid administrative credentials');
  };

  const createAccessSession: TypedHandler<H.CreateAccessSessionData, H.CreateAccessSessionResponses & H.CreateAccessSessionErrors> = async (request) => {
    const refusal = await refuse(request);
    if (refusal) return refusal;
    const session = await sessions.create(request.body.variables);
    return { status: 201, body: toAccessSession(session), headers: { location: `/access/sessions/${session.id}` } };
  };

  const getAccessSession: TypedHandler<H.GetAccessSessionData, H.GetAccessSessionResponses & H.GetAccessSessionErrors> = async (request) => {
    const refusal = await refuse(request);
    if (refusal) return refusal;
    const session = await sessions.get(request.params.sessionId);
    return session.ok ? { status: 200, body: toAccessSession(session.value) } : failure(session.failure);
  };

  const deleteAccessSession: TypedHandler<H.DeleteAccessSessionData, H.DeleteAccessSessionResponses & H.DeleteAccessSessionErrors> = async (request) => {
    const refusal = await refuse(request);
    if (refusal) return refusal;
    const deleted = await sessions.delete(request.params.sessionId);
    return deleted.ok ? { status: 204, body: undefined } : failure(deleted.failure);
  };

  const runJwtParseAgent: TypedHandler<H.RunJwtParseAgentData, H.RunJwtParseAgentResponses & H.RunJwtParseAgentErrors> = async (request) => {
    const refusal = await refuse(request);
    if (refusal) return refusal;
    const sessionId = request.params.sessionId;
    const ran = await sessions.runJwtParse(sessionId);
    return ran.ok ? { status: 200, body: { agent: 'jwt-parse', sessionId, variables: ran.value } } : failure(ran.failure);
  };

  const getAuthorizationRedirect: TypedHandler<H.GetAuthorizationRedirectData, { 302: undefined } & H.GetAuthorizationRedirectErrors> = async (request) => {
    const refusal = await refuse(request);
    if (refusal) return refusal;
    const redirect = await sessions.authorizationRedirect(request.params.sessionId, request.query.prompt);
    // The Location carries a one-time state: no cache may keep it.
    return redirect.ok ? { status: 302, body: undefined, headers: { location: redirect.value, 'cache-control': 'no-store' } } : failure(redirect.failure);
  };

  return { createAccessSession, getAccessSession, deleteAccessSession, runJwtParseAgent, getAuthorizationRedirect };
}
