import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's Prometheus metrics, served at `/metrics` on every role. One registry per process
 * (labels tell the roles apart), created in the composition root and passed in.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'portolan_' });
  const requests = new RequestSeries();
  registry.registerMetric(requests.counter as never);
  registry.registerMetric(requests.histogram as never);
  return {
    registry,
    /** Records one answered request; `operation` is the operationId, or `none` when nothing matched. */
    observe(role: string, operation: string | undefined, status: number, seconds: number) {
      requests.observe(role, operation ?? 'none', status, seconds);
    },
    contentType: registry.contentType,
    render: () => registry.metrics(),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

type Value = { labels: Record<string, string | number>; value: number; metricName?: string };
type Timing = { role: string; operation: string; buckets: number[]; sum: number; count: number };

/**
 * The request counter and duration histogram, kept as plain numbers per series and turned into
 * prom-client's metric values only when /metrics is scraped: recording a request is two map lookups
 * and a few additions (prom-client's own Counter and Histogram hash a label object on every call,
 * ~5 us a request on the gateway's path). Bounded: roles and operations come from the specs, statuses
 * are three digits.
 */
class RequestSeries {
  private readonly counts = new Map<string, { labels: Record<string, string>; value: number }>();
  private readonly timings = new Map<string, Timing>();

  observe(role: string, operation: string, status: number, seconds: number): void {
    const countKey = `${role} ${operation} ${status}`;
    const count = this.counts.get(countKey);
    if (count) count.value++;
    else this.counts.set(countKey, { labels: { role, operation, status: String(status) }, value: 1 });
    const timingKey = `${role} ${operation}`;
    let timing = this.timings.get(timingKey);
    if (!timing) {
      timing = { role, operation, buckets: new Array<number>(DURATION_BUCKETS.length).fill(0), sum: 0, count: 0 };
      this.timings.set(timingKey, timing);
    }
    timing.count++;
    timing.sum += seconds;
    for (let i = 0; i < DURATION_BUCKETS.length; i++) {
      if (seconds <= DURATION_BUCKETS[i]!) {
        timing.buckets[i]!++;
        break;
      }
    }
  }

  readonly counter = {
    name: 'portolan_http_requests_total',
    help: 'HTTP requests answered, by role, operation and status.',
    type: 'counter',
    aggregator: 'sum',
    get: async () => ({
      name: this.counter.name,
      help: this.counter.help,
      type: this.counter.type,
      aggregator: this.counter.aggregator,
      values: [...this.counts.values()].map((entry): Value => ({ labels: entry.labels, value: entry.value })),
    }),
    reset: () => this.counts.clear(),
  };

  readonly histogram = {
    name: 'portolan_http_request_duration_seconds',
    help: 'Time from the request to the end of its answer, by role and operation.',
    type: 'histogram',
    aggregator: 'sum',
    get: async () => {
      const name = this.histogram.name;
      const values: Value[] = [];
      for (const timing of this.timings.values()) {
        const { role, operation } = timing;
        let cumulative = 0;
        for (let i = 0; i < DURATION_BUCKETS.length; i++) {
          cumulative += timing.buckets[i]!;
          values.push({ labels: { le: DURATION_BUCKETS[i]!, role, operation }, value: cumulative, metricName: `${name}_bucket` });
        }
        values.push({ labels: { le: '+Inf', role, operation }, value: timing.count, metricName: `${name}_bucket` });
        values.push({ labels: { role, operation }, value: timing.sum, metricName: `${name}_sum` });
        values.push({ labels: { role, operation }, value: timing.count, metricName: `${name}_count` });
      }
      return { name, help: this.histogram.help, type: this.histogram.type, aggregator: this.histogram.aggregator, values };
    },
    reset: () => this.timings.clear(),
  };
}
