import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { ERROR_CODES, type ErrorCode, type PortolanError } from '../lib/errors.ts';

/** What a handler sees of a request: already routed, parsed and validated against the spec. */
export type HandlerRequest<TPath = Record<string, string>, TQuery = Record<string, unknown>, TBody = unknown> = {
  operationId: string;
  /** The role (listener) the request arrived on. */
  role: string;
  method: string;
  /** The request path without the query string. */
  path: string;
  params: TPath;
  query: TQuery;
  headers: IncomingHttpHeaders;
  cookies: Record<string, string>;
  body: TBody;
  /** The body's bytes as received (buffered operations); undefined when empty or streamed. */
  rawBody: Buffer | undefined;
  /** The unread body of a streamed operation (multipart uploads): the handler reads it, bounded. */
  bodyStream?: Readable;
  /** Who the spec's security schemes authenticated, when an authenticator names a user. */
  principal?: string;
  /** The client's address (for per-client backoff and the real products' `address` fields). */
  remoteAddress?: string;
  requestId: string;
};

/** A response body: JSON-serialisable value, text, bytes or a stream. */
export type ResponseBody = unknown;

/** What a handler returns; only the HTTP adapter writes it to the socket. */
export type HandlerResponse = {
  status: number;
  body?: ResponseBody | Readable;
  headers?: Record<string, string | readonly string[]>;
  /** Media type of the body; defaults to application/json for objects. */
  contentType?: string;
};

/**
 * A handler's expected failure: a registry value (src/lib/errors.ts), never a hand-built error body. The
 * role app renders it in the interface's error shape and, with response checking on, checks the answer
 * against the spec like any other.
 */
export type HandlerFailure<C extends ErrorCode = ErrorCode> = {
  error: PortolanError & { code: C };
  /** Headers the answer carries besides the error shape's own (a challenge, Retry-After). */
  headers?: Record<string, string | readonly string[]>;
};

/** The failure arm of a handler: `refuse('objectNotFound', "Chart 'x' was not found.")`. */
export function refuse<C extends ErrorCode>(code: C, message?: string, headers?: HandlerFailure['headers']): HandlerFailure<C> {
  return { error: { code, message: message ?? ERROR_CODES[code].message }, ...(headers ? { headers } : {}) };
}

/** A registry failure as a handler's answer (a domain `Result`'s error arm). */
export const refusal = <C extends ErrorCode>(
  error: PortolanError & { code: C },
  headers?: HandlerFailure['headers'],
): HandlerFailure<C> => ({
  error,
  ...(headers ? { headers } : {}),
});

export const isFailure = (outcome: HandlerResponse | HandlerFailure): outcome is HandlerFailure => 'error' in outcome;

/** What a handler answers: a response, or a registry failure the role app renders. */
export type HandlerOutcome = HandlerResponse | HandlerFailure;

// biome-ignore lint/suspicious/noExplicitAny: one map holds handlers typed per operation (their request parts differ); each is checked where it is written (TypedHandler)
export type Handler = (request: HandlerRequest<any, any, any>) => Promise<HandlerOutcome> | HandlerOutcome;

/** Handlers of one interface, keyed by operationId. */
export type HandlerMap = Readonly<Record<string, Handler>>;

/** The operationIds of a generated SDK module (`typeof Sdk`): its exported functions. */
export type OperationId<TSdk> = { [K in keyof TSdk]: TSdk[K] extends (...args: never[]) => unknown ? K : never }[keyof TSdk] & string;

/**
 * The handlers of one spec, keyed by its operationIds (from its generated SDK: `typeof Sdk`): every
 * operation has one, except those named in `TMissing` (they answer 501, and the module lists them in
 * its `notImplemented`). Used with `satisfies`, a missing handler or a misspelt operationId is a type error.
 */
export type OperationHandlers<TSdk, TMissing extends OperationId<TSdk> = never> = Readonly<
  Record<Exclude<OperationId<TSdk>, TMissing>, Handler>
>;

/** The registry codes whose status is one of `S` (a spec's declared error statuses). */
export type CodeWithStatus<S> = { [K in ErrorCode]: (typeof ERROR_CODES)[K]['status'] extends S ? K : never }[ErrorCode];

/**
 * A typed handler: request parts and response bodies come from the generated types of the spec
 * (`XData`, `XResponses`); its failures are registry values whose status is one of the spec's declared
 * error statuses (`XErrors`), so a handler cannot answer an error the spec does not list.
 */
export type TypedHandler<
  TData extends { path?: unknown; query?: unknown; body?: unknown },
  TResponses extends Record<number, unknown>,
  TErrors = never,
> = (
  request: HandlerRequest<Part<TData['path']>, Part<TData['query']>, TData['body']>,
) => Promise<ResponseOf<TResponses> | FailureOf<TErrors>> | ResponseOf<TResponses> | FailureOf<TErrors>;

/** The failures a spec's `XErrors` allows: registry codes with one of its statuses. */
export type FailureOf<TErrors> = [TErrors] extends [never] ? never : HandlerFailure<CodeWithStatus<keyof TErrors>>;

/** A request part of the generated `XData` types; operations without that part get an empty record. */
type Part<T> = [Exclude<T, undefined>] extends [never] ? Record<string, never> : Exclude<T, undefined>;

export type ResponseOf<TResponses extends Record<number, unknown>> = {
  [S in keyof TResponses & number]: Omit<HandlerResponse, 'status' | 'body'> & { status: S; body: TResponses[S] };
}[keyof TResponses & number];
