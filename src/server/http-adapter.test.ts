import t from 'tap';
import { PassThrough } from 'node:stream';
import { request as send } from 'undici';
import { createFakeClock } from '../lib/clock.ts';
import { createLogger } from '../lib/logger.ts';
import { createMetrics } from '../lib/metrics.ts';
import { loadConfig } from '../app/config.ts';
import { statusOf } from '../lib/errors.ts';
import { createRoleServer } from './http-adapter.ts';
import type { Stage } from './stages.ts';

// The adapter alone, with one stage and timers that never move: nothing here may wait on a timer.
async function serve(t: { teardown(fn: () => unknown): void }, stage: Stage) {
  const clock = createFakeClock();
  const server = createRoleServer({
    role: 'test',
    stages: [stage],
    renderError: (e) => ({ status: statusOf(e), body: { problem: e.message } }),
    limits: loadConfig({}),
    logger: createLogger({ level: 'silent' }),
    metrics: createMetrics(),
    timers: clock,
  });
  const address = await server.listen(0, '127.0.0.1');
  t.teardown(() => server.close(0));
  return `http://127.0.0.1:${address.port}`;
}

t.test('a streamed answer ends as soon as it is written when the request body ended meanwhile (no linger)', async (t) => {
  // The stage reads the whole upload while it streams its answer, as the gateway's proxy does. Before
  // the fix the adapter then waited for an `end` that had already fired: the answer ended lingerMs late,
  // and with these timers (never advanced) it would never end.
  const url = await serve(t, async (request) => {
    const answer = new PassThrough();
    answer.write('first ');
    (async () => {
      for await (const _chunk of request.body!) {
        /* read the whole upload */
      }
      answer.end('last');
    })();
    return { status: 200, body: answer, contentType: 'text/plain' };
  });
  const upload = new PassThrough();
  upload.write('1234');
  const response = await send(url, { method: 'POST', body: upload, headers: { 'content-length': '8' } });
  upload.end('5678'); // the rest of the body only once the answer has started
  t.equal(response.statusCode, 200);
  t.equal(await response.body.text(), 'first last');
});

t.test('an answer with a header node:http refuses becomes a 500, and the process keeps serving', async (t) => {
  let calls = 0;
  const url = await serve(t, () =>
    ++calls === 1 ? { status: 200, body: { ok: true }, headers: { location: 'bad\nvalue' } } : { status: 200, body: { ok: true } },
  );
  const broken = await send(url);
  t.equal(broken.statusCode, 500);
  t.same(await broken.body.json(), { problem: 'An unexpected error occurred.' });
  const next = await send(url);
  t.equal(next.statusCode, 200);
  await next.body.dump();
});

t.test('a request target in absolute form is served as its path; anything else that is not a path is a 400', async (t) => {
  const url = await serve(t, (request) => ({ status: 200, body: { url: request.url } }));
  const { connect } = await import('node:net');
  const exchange = (text: string) =>
    new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(url).port), '127.0.0.1');
      let received = '';
      socket.on('data', (c) => {
        received += c;
        if (received.includes('}')) socket.end();
      });
      socket.on('close', () => resolve(received));
      socket.write(text);
    });
  t.match(
    await exchange('GET http://example.test/api/vessels?x=1 HTTP/1.1\r\nHost: example.test\r\n\r\n'),
    /\{"url":"\/api\/vessels\?x=1"\}/,
  );
  const answer = await exchange('OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n');
  t.match(answer, /^HTTP\/1\.1 400 /);
  t.match(answer, /must be a path/);
});
