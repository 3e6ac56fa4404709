import type { IncomingRequest, RoleResponse } from './role-app.ts';

/** What a stage may do to the connection a request came on (nothing, in-process). */
export type ConnectionControl = {
  /** Closes the connection when it sends nothing for `ms`. */
  setIdleTimeout(ms: number): void;
  /** Closes the connection `ms` from now whatever it is doing (a session lifetime). */
  closeAfter(ms: number, reason: string): void;
};

/** A request as stages see it: the role app's view plus where it came from and when its client left. */
export type StagedRequest = IncomingRequest & {
  /** The header fields as received, names in their case, in order (`[name, value, ...]`). */
  rawHeaders: readonly string[];
  remoteAddress: string | undefined;
  /** The address the connection came in on (the reference pages' links use it when a request has no Host). */
  localAddress?: string | undefined;
  /** Aborted when the client goes away before its answer was written. */
  signal: AbortSignal;
  connection: ConnectionControl;
};

/**
 * What a stage answers: a response, with optional fields for the request log line. A passed-on answer
 * (the gateway's proxy) brings its header fields as received (`rawHeaders`, written as they are, in
 * place of `headers`) and its reason phrase.
 */
export type StageResponse = RoleResponse & {
  rawHeaders?: readonly string[];
  statusText?: string;
  /** Fields added to the request's access line, which is not redacted: never a credential or a request's content. */
  log?: Readonly<Record<string, unknown>>;
  /**
   * Set on the answers about the role rather than of its operations (/metrics, the reference pages):
   * they are not counted in the request metrics (a scrape would count itself), and their log line is
   * at `debug` (a browser loading /docs asks for a dozen files) or there is none (`silent`: /metrics).
   */
  aside?: 'debug' | 'silent';
};

/**
 * One step of a role's request path: answers (a response) or passes on (undefined). A role is an
 * ordered list of stages; the last one always answers (the role app, or the gateway's proxy).
 */
export type Stage = (request: StagedRequest) => Promise<StageResponse | undefined> | StageResponse | undefined;

/** Runs stages in order until one answers (a stage that passes on synchronously costs no turn of the microtask queue). */
export async function runStages(stages: readonly Stage[], request: StagedRequest): Promise<StageResponse> {
  for (const stage of stages) {
    const outcome = stage(request);
    const response = outcome instanceof Promise ? await outcome : outcome;
    if (response) return response;
  }
  throw new Error('no stage answered the request (the last stage must always answer)');
}

export const NO_CONNECTION: ConnectionControl = { setIdleTimeout: () => {}, closeAfter: () => {} };
