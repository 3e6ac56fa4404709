import { createWriteStream } from 'node:fs';
import type { Clock } from '../lib/clock.ts';

/** A qlog trace being written: events go to the file as they happen, `close()` makes it valid JSON. */
export type QlogTrace = {
  readonly file: string;
  /** Appends one event; `data` must hold no payload (no header values, bodies or query strings). */
  event(name: string, data: Record<string, unknown>): void;
  /** Ends the JSON document and resolves once everything is on disk; later events are ignored. */
  close(): Promise<void>;
};

export type QlogTraceOptions = {
  clock: Clock;
  title: string;
  /** Called once if the file cannot be written; the trace then drops its events. */
  onError?: (error: Error) => void;
  /** Bytes an unflushed trace may hold in memory; events beyond are dropped and counted (default 16 MiB). */
  maxBufferedBytes?: number;
};

/**
 * Writes a qlog 0.3 trace in its JSON format (one document: head, events, tail) as a stream: each
 * event is appended through one write stream as it happens, so nothing blocks the request path and
 * an interrupted trace still holds every event up to the last write. Only `close()` adds the tail
 * that makes the file parse as JSON.
 *
 * @example
 * const trace = createQlogTrace('/var/lib/portolan/trace0.qlog', { clock: systemClock, title: 'data plane' });
 * trace.event('http:request', { method: 'GET', path: '/', status: 200 });
 * await trace.close();
 */
export function createQlogTrace(file: string, options: QlogTraceOptions): QlogTrace {
  const { clock } = options;
  const maxBufferedBytes = options.maxBufferedBytes ?? 16 * 1024 * 1024;
  const referenceTime = clock.nowMs();
  const stream = createWriteStream(file, { flags: 'w' });
  let failed = false;
  let closing: Promise<void> | undefined;
  let events = 0;
  let dropped = 0;
  stream.once('error', (error) => {
    failed = true;
    options.onError?.(error);
  });

  const head = {
    qlog_version: '0.3',
    qlog_format: 'JSON',
    title: options.title,
    traces: [{ vantage_point: { type: 'server' }, common_fields: { reference_time: referenceTime, time_format: 'relative' }, events: [] }],
  };
  // The head as JSON, cut open just inside the events array: events and the tail are appended to it.
  const headText = JSON.stringify(head);
  stream.write(headText.slice(0, headText.lastIndexOf('[]') + 1));

  const append = (name: string, data: Record<string, unknown>) => {
    stream.write(`${events++ === 0 ? '' : ','}${JSON.stringify({ time: clock.nowMs() - referenceTime, name, data })}`);
  };

  return {
    file,
    event(name, data) {
      if (closing || failed) return;
      // A disk slower than the traffic must not grow memory without bound: drop, and say so at the end.
      if (stream.writableLength > maxBufferedBytes) {
        dropped++;
        return;
      }
      append(name, data);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        if (dropped > 0 && !failed) append('qlog:events_dropped', { count: dropped });
        if (stream.closed) return resolve();
        // 'close' comes after the last write reached the file and its descriptor was closed (or after a failure).
        stream.once('close', () => resolve());
        if (!failed) stream.end(']}]}');
      });
      return closing;
    },
  };
}
