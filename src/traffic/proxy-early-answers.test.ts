// A member that answers before the request body was all sent (413 past its limit, 401): the client
// gets that answer at once and whole, the rest of the body is not passed on, and the connection
// closes cleanly (Connection: close, after the client has sent the rest or the linger time passed).
import t from 'tap';
import { request as httpRequest } from 'node:http';
import { hasSettled } from '../lib/clock.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { postLargeJson, send, SENT_FIRST } from './test-clients.ts';
import { startHttpMember, startProxiedGateway as gatewayFor, waitFor } from './test-servers.ts';

/** What a member answers at once, without reading the body (each with its Content-Length, as the mapping role answers). */
const EARLY_ANSWERS: Record<string, { status: number; headers: Record<string, string>; body: string }> = {
  // The mapping role past its body limit: 413, and it closes its connection.
  '/too-large': {
    status: 413,
    headers: { 'content-type': 'application/json', connection: 'close' },
    body: '{"status":"error","message":"The request body exceeds 1048576 bytes."}',
  },
  // A member that refuses the caller: 401, and its connection stays open.
  '/needs-auth': {
    status: 401,
    headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="charts"' },
    body: '{"status":"error","message":"Authentication required."}',
  },
};

/** A member answering EARLY_ANSWERS' paths at once; any other request is read whole and answered 200. */
async function startEarlyAnswerMember(t: TapTest) {
  return startHttpMember(t, 'early', (req, res) => {
    const early = EARLY_ANSWERS[req.url ?? ''];
    if (early) {
      res.writeHead(early.status, { ...early.headers, 'content-length': String(Buffer.byteLength(early.body)) });
      return void res.end(early.body);
    }
    req.resume();
    req.on('end', () => res.end('served'));
  });
}

for (const [path, early] of Object.entries(EARLY_ANSWERS)) {
  t.test(`a member answering ${early.status} before the body is sent: the client gets it at once, whole, then a clean close`, async (t) => {
    const member = await startEarlyAnswerMember(t);
    const gateway = await gatewayFor(t, [member]);
    const size = 1_100_000;
    const outcome = await postLargeJson(gateway.port, path, size, 'after answer').closed;
    t.ok(outcome.answeredBeforeBodySent, `answered while the client held all but ${SENT_FIRST} bytes of its body`);
    t.equal(outcome.status, early.status);
    t.equal(outcome.body, early.body, 'the whole answer');
    const { connection: _, ...endToEnd } = early.headers;
    t.match(outcome.headers, { ...endToEnd, 'content-length': String(early.body.length) }, "the member's fields");
    t.equal(outcome.headers?.connection, 'close', 'Connection: close: the request body was not read to its end');
    t.same(outcome.errors, [], 'no reset, no broken pipe: the client sent the rest of its body, then the gateway closed');
    t.ok(
      member.bytesReceived() < 2 * SENT_FIRST,
      `the rest of the body is not passed on (${member.bytesReceived()} of ${size} bytes reached the member)`,
    );
    t.ok(await waitFor(() => gateway.results.length === 1), 'forward() settled');
    t.same(gateway.results, [{ status: early.status, member: `127.0.0.1:${member.port}` }], 'reported with the status the client got');
    t.equal((await send(gateway.port, { method: 'POST', path: '/next' }, 'x')).body.toString(), 'served', 'the gateway keeps serving');
  });
}

for (const [path, early] of Object.entries(EARLY_ANSWERS)) {
  t.test(`a client sending a large body all at once gets the member's early ${early.status}, never a hang or a reset`, async (t) => {
    const member = await startEarlyAnswerMember(t);
    const gateway = await gatewayFor(t, [member]);
    const body = Buffer.from(JSON.stringify({ note: 'x'.repeat(1_100_000) }));
    const outcome = await new Promise<{ status?: number; body: string; errors: string[] }>((resolve) => {
      const seen: { status?: number; body: string; errors: string[] } = { body: '', errors: [] };
      const noAnswer = setTimeout(() => req.destroy(new Error('no answer')), 5000); // only keeps a broken proxy from hanging the test
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: gateway.port,
          method: 'POST',
          path,
          agent: false,
          headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
        },
        (res) => {
          seen.status = res.statusCode;
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (seen.body += chunk));
          res.on('error', (error) => seen.errors.push(`answer: ${error.message}`));
        },
      );
      req.on('error', (error) => seen.errors.push(`request: ${error.message}`));
      req.on('close', () => (clearTimeout(noAnswer), resolve(seen)));
      req.end(body);
    });
    t.same(outcome, { status: early.status, body: early.body, errors: [] }, 'the whole answer, no reset');
    t.ok(await waitFor(() => gateway.results.length === 1), 'forward() settled');
    t.same(
      gateway.results,
      [{ status: early.status, member: `127.0.0.1:${member.port}` }],
      `reported as ${early.status}, not as a client that went away (499)`,
    );
  });
}

t.test('a client that stops sending after an early answer is closed once the linger time has passed', async (t) => {
  const member = await startEarlyAnswerMember(t);
  const gateway = await gatewayFor(t, [member]);
  const { outcome, closed } = postLargeJson(gateway.port, '/needs-auth', 1_100_000, 'never');
  t.ok(await waitFor(() => outcome.status === 401), 'answered');
  t.ok(await waitFor(() => gateway.clock.pendingTimers()[0] === 5000), 'the gateway waits up to 5 s for the rest of the body');
  await gateway.clock.advanceAsync(4999);
  t.notOk(await hasSettled(closed), 'the connection is open 1 ms before the linger time ends');
  await gateway.clock.advanceAsync(1);
  t.equal((await closed).body, EARLY_ANSWERS['/needs-auth']!.body, 'closed after the whole answer');
  t.ok(await waitFor(() => gateway.results.length === 1));
  t.same(gateway.results, [{ status: 401, member: `127.0.0.1:${member.port}` }]);
});
