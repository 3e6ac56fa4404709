import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

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

export type Handler = (request: HandlerRequest<any, any, any>) => Promise<HandlerResponse> | HandlerResponse;

/** Handlers of one interface, keyed by operationId. */
export type HandlerMap = Readonly<Record<string, Handler>>;

/**
 * The handlers of one spec, keyed by its operationIds (from its generated SDK: `typeof Sdk`). Used with
 * `satisfies`, a misspelt operationId is a type error; an operation left out answers 501 and must be
 * listed in src/app/not-implemented.yaml (a test compares the two exactly).
 */
export type OperationHandlers<TSdk> = Partial<Record<keyof TSdk & string, Handler>>;

/** A typed handler: request parts and response bodies come from the generated types of the spec. */
export type TypedHandler<
  TData extends { path?: unknown; query?: unknown; body?: unknown },
  TResponses extends Record<number, unknown>,
> = (
  request: HandlerRequest<Part<TData['path']>, Part<TData['query']>, TData['body']>,
) => Promise<ResponseOf<TResponses>> | ResponseOf<TResponses>;

/** A request part of the generated `XData` types; operations without that part get an empty record. */
type Part<T> = [Exclude<T, undefined>] extends [never] ? Record<string, never> : Exclude<T, undefined>;

export type ResponseOf<TResponses extends Record<number, unknown>> = {
  [S in keyof TResponses & number]: Omit<HandlerResponse, 'status' | 'body'> & { status: S; body: TResponses[S] };
}[keyof TResponses & number];
