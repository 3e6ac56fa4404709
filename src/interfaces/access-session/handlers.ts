import type * as Sdk from '../../../generated/access-session/sdk.gen.ts';
import type * as H from '../../../generated/access-session/types.gen.ts';
import { type OperationHandlers, refusal, type TypedHandler } from '../../server/handler-types.ts';
import type { AccessSessions } from './sessions.ts';
import type { AccessSessionRecord } from './store.ts';

export type AccessSessionDependencies = { sessions: AccessSessions };

const toAccessSession = (session: AccessSessionRecord): H.AccessSession => ({
  id: session.id,
  variables: session.variables,
  createdAt: new Date(session.createdMs).toISOString(),
  expiresAt: new Date(session.expiresMs).toISOString(),
});

/**
 * Interface H: the designed administrative interface of the gateway's access sessions. Thin
 * HTTP <-> domain handlers; requests arrive authenticated (the spec's `adminBasic`) and validated
 * against specs/access-session.yaml.
 */
export function createAccessSessionHandlers({ sessions }: AccessSessionDependencies) {
  const createAccessSession: TypedHandler<H.CreateAccessSessionData, H.CreateAccessSessionResponses, H.CreateAccessSessionErrors> = async (
    request,
  ) => {
    const session = await sessions.create(request.body.variables);
    return { status: 201, body: toAccessSession(session), headers: { location: `/access/sessions/${session.id}` } };
  };

  const getAccessSession: TypedHandler<H.GetAccessSessionData, H.GetAccessSessionResponses, H.GetAccessSessionErrors> = async (request) => {
    const session = await sessions.get(request.params.sessionId);
    return session.ok ? { status: 200, body: toAccessSession(session.value) } : refusal(session.error);
  };

  const deleteAccessSession: TypedHandler<H.DeleteAccessSessionData, H.DeleteAccessSessionResponses, H.DeleteAccessSessionErrors> = async (
    request,
  ) => {
    const deleted = await sessions.delete(request.params.sessionId);
    return deleted.ok ? { status: 204, body: undefined } : refusal(deleted.error);
  };

  const runJwtParseAgent: TypedHandler<H.RunJwtParseAgentData, H.RunJwtParseAgentResponses, H.RunJwtParseAgentErrors> = async (request) => {
    const sessionId = request.params.sessionId;
    const ran = await sessions.runJwtParse(sessionId);
    return ran.ok ? { status: 200, body: { agent: 'jwt-parse', sessionId, variables: ran.value } } : refusal(ran.error);
  };

  // The generator gives no `Responses` type for the spec's only success, a 302 without a body.
  const getAuthorizationRedirect: TypedHandler<
    H.GetAuthorizationRedirectData,
    { 302: undefined },
    H.GetAuthorizationRedirectErrors
  > = async (request) => {
    const redirect = await sessions.authorizationRedirect(request.params.sessionId, request.query.prompt);
    // The Location carries a one-time state: no cache may keep it.
    return redirect.ok
      ? { status: 302, body: undefined, headers: { location: redirect.value, 'cache-control': 'no-store' } }
      : refusal(redirect.error);
  };

  // On the literal: a misspelt or unknown operationId is a type error here.
  return {
    createAccessSession,
    getAccessSession,
    deleteAccessSession,
    runJwtParseAgent,
    getAuthorizationRedirect,
  } satisfies OperationHandlers<typeof Sdk>;
}
