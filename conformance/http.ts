import { Agent, request, type Dispatcher } from 'undici';

/** A request ready to send: URL complete, body encoded. */
export type HttpRequest = {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array | string;
  /** A shorter time limit than the run's for this request (a probe the target is known never to answer). */
  timeoutMs?: number;
};

/** An answer as the response checker wants it: lower-case headers, JSON bodies parsed, text otherwise. */
export type HttpResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** Set when a JSON media type came with a body that is not JSON. */
  jsonError?: string;
  /**
   * The header names as they came on the wire, in their case and order (answer-check.ts checks their case);
   * absent when the client cannot see it (fetch lower-cases every name).
   */
  rawHeaderNames?: readonly string[];
  ms: number;
};

export type HttpClient = {
  send(req: HttpRequest): Promise<HttpResponse>;
  close(): Promise<void>;
};

const isJson = (contentType: string) => /^application\/([\w.+-]*\+)?json$/.test(contentType);
const isText = (contentType: string) => /^text\/|[+/](xml|csv)$|^application\/(x-www-form-urlencoded|javascript)$/.test(contentType);

/** Makes the run's HTTP client: the engine sends every request (checks, logins, scenarios, fuzzing) through it. */
export type HttpTransport = (options: { timeoutMs: number }) => HttpClient;

/**
 * An HTTP client on one keep-alive pool per run (undici): the default for real targets. Never
 * follows redirects: a 302 is an answer the spec declares. Bodies of binary media types are kept as
 * byte counts only. The answer's header names are kept as they came on the wire too (`rawHeaderNames`).
 */
export function createHttpClient(options: { timeoutMs: number }): HttpClient {
  const agent = new Agent({ headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, connections: 16 });
  return {
    async send(req) {
      const started = performance.now();
      let rawHeaderNames: string[] | undefined;
      const res = await request(req.url, {
        method: req.method as never,
        headers: req.headers,
        ...(req.body !== undefined ? { body: req.body } : {}),
        ...(req.timeoutMs !== undefined ? { headersTimeout: req.timeoutMs, bodyTimeout: req.timeoutMs } : {}),
        // undici's answer has lower-case names only: the wire's are taken as the head arrives (same pool).
        dispatcher: agent.compose(rawNamesInto((names) => (rawHeaderNames = names))),
      });
      const bytes = Buffer.from(await res.body.arrayBuffer());
      const answer = decodeAnswer(res.statusCode, res.headers as HttpResponse['headers'], bytes, started);
      if (rawHeaderNames) answer.rawHeaderNames = rawHeaderNames;
      return answer;
    },
    close: () => agent.close(),
  };
}

/** An undici interceptor that hands the final answer's header names, as on the wire, to `take`. */
function rawNamesInto(take: (names: string[]) => void): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => dispatch(options, new RawNames(handler, take));
}

/** Passes every event on to the request's own handler; reads the header names of the final answer on the way. */
class RawNames implements Dispatcher.DispatchHandler {
  private readonly handler: Dispatcher.DispatchHandler;
  private readonly take: (names: string[]) => void;

  constructor(handler: Dispatcher.DispatchHandler, take: (names: string[]) => void) {
    this.handler = handler;
    this.take = take;
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown) {
    this.handler.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>) {
    this.handler.onRequestUpgrade?.(...args);
  }

  onResponseStart(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>) {
    const [controller, statusCode] = args;
    if (statusCode >= 200 && Array.isArray(controller.rawHeaders)) {
      const raw = controller.rawHeaders as (Buffer | string)[];
      const names: string[] = [];
      for (let i = 0; i < raw.length; i += 2) {
        const name = raw[i]!;
        names.push(typeof name === 'string' ? name : name.toString('latin1'));
      }
      this.take(names);
    }
    this.handler.onResponseStart?.(...args);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    this.handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseEnd']>>) {
    this.handler.onResponseEnd?.(...args);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error) {
    this.handler.onResponseError?.(controller, error);
  }
}

/**
 * An HTTP client on `globalThis.fetch`, for in-process targets that intercept fetch (MSW's
 * `setupServer` intercepts fetch and node:http, not undici's own `request`). Redirects are not
 * followed either; each request gets `timeoutMs`.
 *
 * @example
 * await runConformance({ targets: { '*': 'http://localhost:8080' }, transport: createFetchClient });
 */
export function createFetchClient(options: { timeoutMs: number }): HttpClient {
  return {
    async send(req) {
      const started = performance.now();
      const res = await fetch(req.url, {
        method: req.method,
        headers: req.headers,
        ...(req.body !== undefined ? { body: req.body as BodyInit } : {}),
        redirect: 'manual',
        signal: AbortSignal.timeout(req.timeoutMs ?? options.timeoutMs),
      });
      const headers: HttpResponse['headers'] = {};
      res.headers.forEach((value, name) => {
        if (name !== 'set-cookie') headers[name] = value;
      });
      // As undici's request gives them: one Set-Cookie as a string, several as a list.
      const cookies = res.headers.getSetCookie();
      if (cookies.length > 0) headers['set-cookie'] = cookies.length === 1 ? cookies[0] : cookies;
      return decodeAnswer(res.status, headers, Buffer.from(await res.arrayBuffer()), started);
    },
    close: async () => {},
  };
}

/** The answer as the checks read it: JSON parsed (or the parse error kept), text as text, binary as a byte count. */
function decodeAnswer(status: number, headers: HttpResponse['headers'], bytes: Buffer, started: number): HttpResponse {
  const contentType = String(headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  const response: HttpResponse = { status, headers, body: undefined, ms: performance.now() - started };
  if (bytes.length === 0) return response;
  if (isJson(contentType)) {
    try {
      response.body = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      response.body = bytes.toString('utf8');
      response.jsonError = (error as Error).message;
    }
  } else if (isText(contentType) || contentType === '') {
    response.body = bytes.toString('utf8');
  } else {
    response.body = `<${bytes.length} bytes>`;
  }
  return response;
}
