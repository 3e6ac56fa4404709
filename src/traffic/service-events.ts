import type { Logger } from '../lib/logger.ts';
import type { QlogTrace } from './qlog.ts';

/** The data plane's event log levels, least verbose first (the device's `dataplane.quic.log.level`). */
export const DATA_PLANE_LEVELS = ['Critical', 'Error', 'Warning', 'Notice', 'Info', 'Debug'] as const;
export type DataPlaneLevel = (typeof DATA_PLANE_LEVELS)[number];

/** Whether a data plane at `level` records events of `threshold` (Debug records everything). */
export const isRecordedAt = (level: DataPlaneLevel, threshold: DataPlaneLevel) =>
  DATA_PLANE_LEVELS.indexOf(level) >= DATA_PLANE_LEVELS.indexOf(threshold);

/**
 * What a virtual server asks, at each connection and request, about what to record: read every time,
 * so a setting changed at runtime applies to the next request without restarting a listener.
 */
export type ServiceEventHooks = {
  /** The qlog trace being written, if qlogging is on. */
  trace?: () => QlogTrace | undefined;
  /** Whether one access line per request is logged. */
  accessLog?: () => boolean;
  /** The data plane's event level (default Critical: nothing routine is logged). */
  eventLevel?: () => DataPlaneLevel;
};

/** The two ends of a client connection: addresses and ports only, never what was sent. */
export type ConnectionEnds = { clientAddress: string; clientPort: number; localAddress: string; localPort: number };

/** Why a request got no member's whole answer. */
export type RequestFailure =
  | 'no_member'
  | 'member_failed'
  | 'member_timeout'
  | 'loop_detected'
  | 'client_closed'
  | 'answer_cut'
  | 'bad_target'
  /** A rule of the service failed (a Tcl error, past its budget): answered 500. */
  | 'rule_error'
  /** A rule reset the client connection (`reject`) or closed it without an answer (`drop`). */
  | 'rule_reject'
  | 'rule_drop';

/** A rule's run that failed: the connection's ends, the event and rule, the interpreter's message (never the request's content). */
export type RuleFailure = { connection: ConnectionEnds; event: string; rule: string; message: string };

/** One request as it ended: what the records may say of it (the path without its query string). */
export type RequestRecord = {
  connection: ConnectionEnds;
  method: string;
  path: string;
  status: number;
  member?: string;
  failure?: RequestFailure;
  /** Bytes read from and written to the client connection for this request, heads included. */
  bytesIn: number;
  bytesOut: number;
  ms: number;
};

/**
 * Records a virtual server's connections and requests as the hooks say: qlog events, an access line
 * per request, and event log lines by level (connections at Notice, requests at Info, member failures
 * at Error). Only addresses, ports, method, path, status, member, sizes and times are ever recorded.
 */
export function createServiceEvents(service: string, logger: Logger, hooks: ServiceEventHooks) {
  const level = () => hooks.eventLevel?.() ?? 'Critical';
  const qlogConnection = (c: ConnectionEnds) => ({
    src_ip: c.clientAddress,
    src_port: c.clientPort,
    dst_ip: c.localAddress,
    dst_port: c.localPort,
  });

  return {
    connectionStarted(connection: ConnectionEnds) {
      hooks.trace?.()?.event('transport:connection_started', { ...qlogConnection(connection), protocol: 'TCP', service });
      if (isRecordedAt(level(), 'Notice')) logger.info({ service, ...connection }, 'connection opened');
    },
    connectionClosed(connection: ConnectionEnds) {
      hooks.trace?.()?.event('transport:connection_closed', { ...qlogConnection(connection), service });
      if (isRecordedAt(level(), 'Notice')) logger.info({ service, ...connection }, 'connection closed');
    },
    /** Always logged, whatever the level: the administrator's rule failed on live traffic. */
    ruleFailed(failure: RuleFailure) {
      const { connection, event, rule, message } = failure;
      const client = `${connection.clientAddress}:${connection.clientPort}`;
      hooks.trace?.()?.event('http:rule_failed', { ...qlogConnection(connection), service, event, rule });
      logger.error({ service, client, event, rule, reason: message }, 'rule failed');
    },
    requestEnded(request: RequestRecord) {
      const { connection, method, path, status, member, failure, bytesIn, bytesOut, ms } = request;
      const client = `${connection.clientAddress}:${connection.clientPort}`;
      const counts = { bytes_in: bytesIn, bytes_out: bytesOut, duration_ms: ms };
      const qlogBase = { ...qlogConnection(connection), service, method, path, status, ...(member ? { member } : {}) };
      if (failure) hooks.trace?.()?.event('http:request_failed', { ...qlogBase, reason: failure, ...counts });
      else hooks.trace?.()?.event('http:request', { ...qlogBase, ...counts });

      if (hooks.accessLog?.()) logger.info({ service, client, method, path, status, member, bytes: bytesOut, ms }, 'access');
      const memberFailed =
        failure === 'no_member' || failure === 'member_failed' || failure === 'member_timeout' || failure === 'loop_detected';
      if (memberFailed && isRecordedAt(level(), 'Error'))
        logger.error({ service, client, method, path, status, member, reason: failure }, 'request failed');
      else if (isRecordedAt(level(), 'Info'))
        logger.info({ service, client, method, path, status, member, ...(failure ? { reason: failure } : {}), ms }, 'request');
    },
  };
}

export type ServiceEvents = ReturnType<typeof createServiceEvents>;
