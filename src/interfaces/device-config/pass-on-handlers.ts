import type { Handler, HandlerMap, HandlerOutcome, HandlerRequest } from '../../server/handler-types.ts';
import type { Timers } from '../../lib/timers.ts';
import type { PairStatus } from './device-pair.ts';
import { standbyRefusal } from './standby-refusal.ts';

/** Marks a request one device process passed on to another: it is never passed on again (no loop between two standbys). */
export const PASSED_ON_HEADER = 'x-portolan-passed-on';

/** Request headers the active process needs: the credentials as sent, and the body's type. */
const REQUEST_HEADERS = ['authorization', 'x-vendor-auth-token', 'content-type', 'accept'] as const;
/** Answer headers passed back with the active process's status and body. */
const ANSWER_HEADERS = ['retry-after', 'www-authenticate'] as const;

export type PassOnOptions = {
  status(): PairStatus;
  /** This process's own advertised URL (a lease naming it is never passed on to). */
  ownUrl(): string;
  timers: Timers;
  /** How long the active process may take to answer (a deployment of megabytes takes seconds). */
  timeoutMs: number;
  /** Answers larger than this are not passed back (refused as if the active process did not answer). */
  maxAnswerBytes: number;
  fetch?: typeof fetch;
};

/** Whether an operation needs the active process: a write that answers after it ran (an asynchronous one only queues). */
const needsActive = (request: HandlerRequest) => request.method !== 'GET' && request.method !== 'HEAD' && request.query.async !== true;

function queryText(query: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined) search.append(key, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

async function boundedBytes(response: Response, max: number): Promise<Buffer | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (!response.body) return Buffer.alloc(0);
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * The standby device process's writes that need the active one (deployments and removals: they touch the
 * data plane and the deployment lock) are passed on to the active one's advertised URL, with the original
 * credentials, and its answer (status, body) given back as is: integrators, and a load balancer spreading
 * requests over both processes, see one device. When the active one cannot be reached in time (or no
 * active one is known), the operation's own handler answers: on the standby it refuses `deviceStandby`,
 * naming the active one. On the active process, and for reads, the handlers answer themselves.
 */
export function passingOnWrites<M extends HandlerMap>(handlers: M, options: PassOnOptions): M {
  const doFetch = options.fetch ?? fetch;

  async function passOn(request: HandlerRequest, target: string, own: Handler): Promise<HandlerOutcome> {
    const headers: Record<string, string> = { [PASSED_ON_HEADER]: '1' };
    for (const name of REQUEST_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const controller = new AbortController();
    const cancel = options.timers.after(options.timeoutMs, () => controller.abort(), { background: true });
    try {
      const response = await doFetch(`${target}${request.path}${queryText(request.query)}`, {
        method: request.method,
        headers,
        ...(request.rawBody ? { body: new Uint8Array(request.rawBody) } : {}),
        signal: controller.signal,
        redirect: 'manual',
      });
      const body = await boundedBytes(response, options.maxAnswerBytes);
      if (!body) return { error: standbyRefusal(target) };
      const passed: Record<string, string> = {};
      for (const name of ANSWER_HEADERS) {
        const value = response.headers.get(name);
        if (value !== null) passed[name] = value;
      }
      return {
        status: response.status,
        ...(body.length > 0 ? { body, contentType: response.headers.get('content-type') ?? 'application/json' } : {}),
        headers: passed,
      };
    } catch {
      // Not reachable, or no answer in time: the standby's own refusal names the active one.
      return own({ ...request, headers: { ...request.headers, [PASSED_ON_HEADER]: '1' } });
    } finally {
      cancel();
    }
  }

  const wrap =
    (handler: Handler): Handler =>
    (request) => {
      if (!needsActive(request) || request.headers[PASSED_ON_HEADER] !== undefined) return handler(request);
      const { role, activeUrl } = options.status();
      if (role === 'active' || !activeUrl || activeUrl === options.ownUrl()) return handler(request);
      return passOn(request, activeUrl, handler);
    };

  return Object.fromEntries(Object.entries(handlers).map(([operationId, handler]) => [operationId, wrap(handler)])) as M;
}
