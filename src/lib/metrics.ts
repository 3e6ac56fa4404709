import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's Prometheus metrics, served at `/metrics` on every role. One registry per process
 * (labels tell the roles apart), created in the composition root and passed in.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'portolan_' });
  const requests = new Counter({
    name: 'portolan_http_requests_total',
    help: 'HTTP requests answered, by role, operation and status.',
    labelNames: ['role', 'operation', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'portolan_http_request_duration_seconds',
    help: 'Time from the request to the end of its answer, by role and operation.',
    labelNames: ['role', 'operation'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  // The labelled series of each (role, operation, status), looked up once: prom-client hashes a label object
  // on every call otherwise. Bounded: roles and operations come from the specs, statuses are three digits.
  const series = new Map<string, { count: { inc(): void }; time: { observe(value: number): void } }>();
  return {
    registry,
    /** Records one answered request; `operation` is the operationId, or `none` when nothing matched. */
    observe(role: string, operation: string | undefined, status: number, seconds: number) {
      const op = operation ?? 'none';
      const key = `${role} ${op} ${status}`;
      let entry = series.get(key);
      if (!entry) {
        entry = { count: requests.labels(role, op, String(status)), time: duration.labels(role, op) };
        series.set(key, entry);
      }
      entry.count.inc();
      entry.time.observe(seconds);
    },
    contentType: registry.contentType,
    render: () => registry.metrics(),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
