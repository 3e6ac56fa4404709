// The request metrics as Prometheus reads them: counts per status, cumulative buckets, sum and count.
import t from 'tap';
import { createMetrics } from './metrics.ts';

const line = (text: string, prefix: string) =>
  text
    .split('\n')
    .find((l) => l.startsWith(`${prefix} `))
    ?.slice(prefix.length + 1);

t.test('requests are counted per role, operation and status; durations in cumulative buckets with their sum and count', async (t) => {
  const metrics = createMetrics();
  metrics.observe('mapping', 'listVessels', 200, 0.0004);
  metrics.observe('mapping', 'listVessels', 200, 0.003);
  metrics.observe('mapping', 'listVessels', 500, 0.003);
  metrics.observe('gateway', undefined, 404, 9);
  const text = await metrics.render();
  t.equal(line(text, 'portolan_http_requests_total{role="mapping",operation="listVessels",status="200"}'), '2');
  t.equal(line(text, 'portolan_http_requests_total{role="mapping",operation="listVessels",status="500"}'), '1');
  t.equal(line(text, 'portolan_http_requests_total{role="gateway",operation="none",status="404"}'), '1', 'no operation: none');
  const bucket = (le: string, role = 'mapping', operation = 'listVessels') =>
    line(text, `portolan_http_request_duration_seconds_bucket{le="${le}",role="${role}",operation="${operation}"}`);
  t.same(
    ['0.0005', '0.001', '0.0025', '0.005', '5', '+Inf'].map((le) => bucket(le)),
    ['1', '1', '1', '3', '3', '3'],
    'cumulative: each bucket counts every duration up to its bound',
  );
  t.equal(bucket('5', 'gateway', 'none'), '0', 'longer than the last bound: only in +Inf');
  t.equal(bucket('+Inf', 'gateway', 'none'), '1');
  t.equal(Number(line(text, 'portolan_http_request_duration_seconds_sum{role="mapping",operation="listVessels"}')), 0.0064);
  t.equal(line(text, 'portolan_http_request_duration_seconds_count{role="mapping",operation="listVessels"}'), '3');
  t.match(text, '# TYPE portolan_http_request_duration_seconds histogram');
  t.match(text, '# TYPE portolan_http_requests_total counter');
});
