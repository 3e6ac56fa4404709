// Test fixtures taken from specs/access-session.yaml itself, so the tests follow the spec's examples.
import { loadSpec } from '../../lib/spec-catalog.ts';

type Example<T> = { value: T };
// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document walked generically (its shape is checked by the spec lint, not by types)
type Json = Record<string, any>;

const spec = loadSpec('access-session') as unknown as Json;
const created = spec.paths['/access/sessions'].post.requestBody.content['application/json'].examples as Record<
  string,
  Example<{ variables: Record<string, string> }>
>;
const parsed = spec.paths['/access/sessions/{sessionId}/agents/jwt-parse'].post.responses['200'].content['application/json'].examples
  .parsed as Example<{ variables: Record<string, string> }>;
const read = spec.paths['/access/sessions/{sessionId}'].get.responses['200'].content['application/json'].examples.afterJwtParse as Example<{
  variables: Record<string, string>;
}>;

/** The variables of a session after the OAuth client step and the directory query (createAccessSession example). */
export const SESSION_INPUT: Record<string, string> = created.afterOAuthClient!.value.variables;

/** The identity token of that example. */
export const EXAMPLE_TOKEN: string = SESSION_INPUT['session.oauth.client.last.id_token']!;

/** What jwt-parse sets for that token (runJwtParseAgent's `parsed` example). */
export const EXAMPLE_PARSED: Record<string, string> = parsed.value.variables;

/** The session's variables after the agent ran (getAccessSession's `afterJwtParse` example). */
export const EXAMPLE_AFTER_PARSE: Record<string, string> = read.value.variables;

/** The designed settings of the spec's info.x-authorization-request and info.x-access-session-settings. */
export const AUTHORIZATION_REQUEST = spec.info['x-authorization-request'] as Json;
export const ACCESS_SESSION_SETTINGS = spec.info['x-access-session-settings'] as Json;
