// Benchmark (not a test): the gateway proxying to the mapping role with the limiter on, against the
// same with the limiter off, against a minimal node:http proxy - all measured in this one run, on
// this machine, with the same load generator. Goal (issue 4): the limiter costs under 10 % of
// throughput, and the gateway reaches at least 0.7x the baseline proxy.
//
//   npm run bench:gateway [-- --requests 20000 --concurrency 64 --rounds 3 --redis redis://127.0.0.1:6379|none]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median, percentile, runLoad } from '../../src/lib/load-generator.ts';
import { childProcesses } from './processes.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '64' },
    path: { type: 'string', default: '/api/vessels' },
    rounds: { type: 'string', default: '3' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
  },
});
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);
const PATH = values.path!;
const REDIS = values.redis === 'none' ? undefined : values.redis!;
const dir = mkdtempSync(join(tmpdir(), 'portolan-bench-'));
const children = childProcesses();
const portolan = (roles: string, env: Record<string, string>, role: string) => children.portolan(roles, env, role);

type Row = { name: string; rps: number; p99: number; errors: number };

async function measure(name: string, url: string, headers: (i: number) => Record<string, string> | undefined): Promise<Row> {
  await runLoad({ targets: [url], requests: 2000, concurrency: CONCURRENCY, request: () => ({ path: PATH }) }); // warm-up
  const result = await runLoad({
    targets: [url],
    requests: REQUESTS,
    concurrency: CONCURRENCY,
    request: (i) => {
      const h = headers(i);
      return h ? { path: PATH, headers: h } : { path: PATH };
    },
  });
  const errors = [...result.byStatus].filter(([status]) => status !== 200).reduce((sum, [, n]) => sum + n, 0);
  return { name, rps: REQUESTS / result.seconds, p99: percentile(result.latenciesMs, 99), errors };
}

try {
  const mapping = await portolan(
    'mapping',
    { PORTOLAN_MAPPING_PORT: '0', PORTOLAN_DATABASE: `sqlite:${join(dir, 'mapping.db')}` },
    'mapping',
  );
  const member = new URL(mapping).host;
  const baseline = await children.start(['scripts/bench/baseline-proxy.ts'], { UPSTREAM: member }, /^READY (\S+)/);
  const gatewayEnv = (name: string, enabled: boolean, store = 'memory') => ({
    PORTOLAN_GATEWAY_PORT: '0',
    PORTOLAN_DATABASE: `sqlite:${join(dir, `gateway-${name}.db`)}`,
    PORTOLAN_POOL_MEMBERS: member,
    PORTOLAN_RATE_LIMIT_ENABLED: String(enabled),
    PORTOLAN_RATE_LIMIT_LIMIT: '1000000000',
    PORTOLAN_RATE_LIMIT_STORE: store,
    PORTOLAN_RATE_LIMIT_REDIS_KEY_PREFIX: `bench:${process.pid}:`,
  });
  const limiterOn = await portolan('gateway', gatewayEnv('memory', true), 'gateway');
  const limiterOff = await portolan('gateway', gatewayEnv('off', false), 'gateway');
  const limiterSqlite = await portolan('gateway', gatewayEnv('sqlite', true, `sqlite:${join(dir, 'counters.db')}`), 'gateway');
  const limiterRedis = REDIS ? await portolan('gateway', gatewayEnv('redis', true, REDIS), 'gateway') : undefined;
  // 1000 tokens in turn: every request is counted, none is limited.
  const bearer = (i: number) => ({ authorization: `Bearer bench-token-${i % 1000}` });

  const rounds: Row[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved rounds, so a slow moment of the machine does not land on one configuration only.
    rounds.push([
      await measure('baseline node:http proxy', baseline, () => undefined),
      await measure('gateway, limiter off', limiterOff, bearer),
      await measure('gateway, limiter on (memory)', limiterOn, bearer),
      await measure('gateway, limiter on (SQLite file)', limiterSqlite, bearer),
      ...(limiterRedis ? [await measure('gateway, limiter on (Redis)', limiterRedis, bearer)] : []),
      await measure('mapping role direct (no proxy)', mapping, () => undefined),
    ]);
  }
  const names = rounds[0]!.map((r) => r.name);
  const rows = names.map((name, k) => ({
    name,
    rps: median(rounds.map((r) => r[k]!.rps)),
    p99: median(rounds.map((r) => r[k]!.p99)),
    errors: rounds.reduce((sum, r) => sum + r[k]!.errors, 0),
  }));
  const base = rows[0]!.rps;
  const off = rows[1]!.rps;
  console.log(
    `GET ${PATH}, ${REQUESTS} requests at concurrency ${CONCURRENCY}, median of ${ROUNDS} interleaved rounds, node ${process.version}`,
  );
  console.log('| configuration | req/s | p99 ms | x baseline | non-200 |');
  console.log('|---|---:|---:|---:|---:|');
  for (const row of rows)
    console.log(`| ${row.name} | ${row.rps.toFixed(0)} | ${row.p99.toFixed(2)} | ${(row.rps / base).toFixed(2)} | ${row.errors} |`);
  const cost = 1 - rows[2]!.rps / off;
  console.log(
    `\nlimiter cost: ${(cost * 100).toFixed(1)} % of throughput (goal < 10 %); gateway with limiter: ${(rows[2]!.rps / base).toFixed(2)}x baseline (goal >= 0.7x)`,
  );
} finally {
  await children.stop();
  rmSync(dir, { recursive: true, force: true });
}
