// The benchmarks' load generator process: autocannon (native-speed HTTP/1.1 keep-alive load, pipelining off),
// run in a process of its own so that it never shares an event loop with what it measures. Takes its
// options as JSON in argv[2] (scripts/bench/load.ts builds them) and prints autocannon's result as one JSON line.
import autocannon from 'autocannon';
import type { LoadSpec } from './load.ts';

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
const headers = { ...(spec.body !== undefined ? { 'content-type': 'application/json' } : {}), ...spec.headers };
const method = (spec.method ?? 'GET') as autocannon.Request['method'];
const result = await autocannon({
  url: new URL(spec.path, spec.url).href,
  connections: spec.connections,
  duration: spec.durationSeconds,
  ...(spec.amount ? { amount: spec.amount } : {}),
  method,
  headers,
  ...(spec.body !== undefined ? { body: spec.body } : {}),
  // Rotating tokens as a fixed list that autocannon builds once and each connection cycles through:
  // every request is counted, spread over many windows, at the generator's full speed.
  ...(spec.rotateBearer
    ? {
        requests: Array.from({ length: spec.rotateBearer }, (_, i) => ({
          method,
          path: spec.path,
          headers: { ...headers, authorization: `Bearer bench-token-${i}` },
          ...(spec.body !== undefined ? { body: spec.body } : {}),
        })),
      }
    : {}),
});
process.stdout.write(
  `${JSON.stringify({
    requests: result.requests.total,
    seconds: result.duration,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statusCodes: result.statusCodeStats,
  })}\n`,
);
