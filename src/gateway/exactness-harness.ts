// Harness of the exactness tests (issue 4's done-when): four gateway processes sharing one counter
// store let exactly `limit` requests of a token through, whatever the interleaving.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { runLoad } from '../lib/load-generator.ts';
import { tempSqliteUrl } from '../app/test-system.ts';
export { tempSqliteUrl };
import type { TapTest } from '../lib/tap-test.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/gateway-process.ts', import.meta.url));
const PROCESSES = 4;
const CONCURRENCY = 256;
export const LIMIT = 1000;

/** A pool member that answers every request 200 at once. */
export async function startUpstream(t: TapTest) {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
    res.end('ok');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as { port: number }).port;
}

/** Starts `PROCESSES` gateway processes on one counter store; resolves with their URLs. */
export async function startGateways(t: TapTest, env: Record<string, string>): Promise<string[]> {
  const dir = tempSqliteUrl(t).dir;
  const children: ChildProcess[] = [];
  t.teardown(async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null) return;
        child.kill('SIGTERM');
        await once(child, 'exit');
      }),
    );
  });
  const urls = await Promise.all(
    Array.from({ length: PROCESSES }, async (_, n) => {
      const child = spawn(process.execPath, [FIXTURE], {
        env: {
          ...process.env,
          PORTOLAN_ROLES: 'gateway',
          PORTOLAN_GATEWAY_PORT: '0',
          PORTOLAN_DATABASE: `sqlite:${join(dir, `gateway-${n}.db`)}`,
          PORTOLAN_ADMIN_PASSWORD: 'exactness-test-admin',
          PORTOLAN_LOG_LEVEL: 'silent',
          PORTOLAN_RATE_LIMIT_LIMIT: String(LIMIT),
          // This proves exact shared counting, not outage detection (redis-outage.test.ts does that with
          // the 50 ms default). Here four gateways, Redis, the load generator and another test job share
          // two cores, and Redis can be starved of CPU for more than 50 ms: with the default, that reads
          // as an outage and the memory policy counts locally. A second is far above any starvation.
          PORTOLAN_RATE_LIMIT_STORE_TIMEOUT_MS: '1000',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      for await (const line of createInterface({ input: child.stdout! })) {
        if (line.startsWith('READY ')) return line.slice('READY '.length);
      }
      throw new Error(`gateway process ${n} exited before it was ready (exit code ${child.exitCode})`);
    }),
  );
  // Like a load balancer, send traffic only once each gateway's /health says its pool and its
  // counter store answer (a limiter that started before Redis answered is in its outage policy).
  await Promise.all(urls.map((url) => healthy(url, 20_000)));
  return urls;
}

async function healthy(url: string, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const status = await fetch(`${url}/health`).then(
      (r) => {
        void r.arrayBuffer();
        return r.status;
      },
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gateway ${url} was not healthy within ${withinMs} ms`);
}

/** Sends `perToken` requests for each token, interleaved over every gateway; returns how many passed per token. */
export async function passedPerToken(gateways: readonly string[], tokens: readonly string[], perToken: number) {
  const passed = new Map(tokens.map((token) => [token, 0]));
  const statuses = new Map<number, number>();
  await runLoad({
    targets: gateways,
    requests: tokens.length * perToken,
    concurrency: CONCURRENCY,
    request: (i) => ({ path: '/api/charts', headers: { authorization: `Bearer ${tokens[i % tokens.length]}` } }),
    onResult: (i, status) => {
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status === 200) passed.set(tokens[i % tokens.length]!, passed.get(tokens[i % tokens.length]!)! + 1);
    },
  });
  return { passed, statuses };
}

export const token = () => `exactness-${randomUUID()}`;

export async function proveExact(t: TapTest, gateways: readonly string[]) {
  for (let run = 1; run <= 10; run++) {
    const { statuses } = await passedPerToken(gateways, [token()], 3000);
    t.same(
      Object.fromEntries(statuses),
      { 200: 1000, 429: 2000 },
      `run ${run} of 10: 3000 requests at concurrency 256 on one token -> 1000 passed, 2000 limited`,
    );
  }
  const tokens = Array.from({ length: 50 }, token);
  const { passed, statuses } = await passedPerToken(gateways, tokens, 1100);
  t.same(Object.fromEntries(statuses), { 200: 50 * 1000, 429: 50 * 100 }, '50 tokens x 1100 interleaved: 50000 passed, 5000 limited');
  t.same([...new Set(passed.values())], [1000], 'exactly 1000 passed for every one of the 50 tokens');
}
