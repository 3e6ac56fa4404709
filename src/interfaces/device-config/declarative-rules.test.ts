import { connect } from 'node:net';
import t from 'tap';
import * as sdk from '../../../generated/device-config/sdk.gen.ts';
import { startTestSystem } from '../../app/test-system.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { captureLogs } from '../../lib/test-logger.ts';
import { through as answerThrough } from '../../traffic/test-virtual-clients.ts';
import { ADMIN_PASSWORD, declaration, deviceClient, freePort, startMember, through } from './test-device.ts';

// A deployed service's iRules run on its live traffic: each test deploys through the device's REST and
// sends real requests to the listener.

const rule = (text: string) => ({ class: 'iRule', iRule: text });
const service = (port: number, pool: string, iRules: unknown[]) => ({
  class: 'Service_HTTP',
  virtualAddresses: ['127.0.0.1'],
  virtualPort: port,
  pool,
  iRules,
});
const pool = (...ports: number[]) => ({
  class: 'Pool',
  members: ports.map((p) => ({ servicePort: p, serverAddresses: ['127.0.0.1'] })),
});

async function deviceWithLogs(t: TapTest) {
  const logs = captureLogs('info');
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD }, fakeTimers: true, logger: logs.logger });
  return { client: deviceClient(system.url('device')), logs };
}

/** What a raw connection to the port saw after sending one request: the bytes, and whether it ended by a reset or a close. */
function rawExchange(port: number): Promise<{ data: string; ended: 'reset' | 'closed' }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    let data = '';
    socket.on('data', (chunk) => (data += chunk));
    socket.on('error', () => resolve({ data, ended: 'reset' }));
    socket.on('end', () => resolve({ data, ended: 'closed' }));
  });
}

t.test('rules answer, redirect and change requests and answers on their way', async (t) => {
  const { client } = await deviceWithLogs(t);
  const echo = await startMember(t, 'echo', (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'x-from-member': 'yes' });
    res.end(`echo ${req.method} ${req.url} ${req.headers['x-added'] ?? '-'}`);
  });
  const [hello, redirect, insert, answer] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const deployed = await sdk.deployDeclaration({
    client,
    body: declaration('T', {
      hello_vs: service(hello, 'p', ['hello_rule']),
      redirect_vs: service(redirect, 'p', [{ use: 'redirect_rule' }]),
      insert_vs: service(insert, 'p', ['/T/A1/insert_rule']),
      answer_vs: service(answer, 'p', ['answer_rule']),
      p: pool(echo.port),
      hello_rule: rule('when HTTP_REQUEST {\n  HTTP::respond 200 content "hello"\n}'),
      redirect_rule: rule('when HTTP_REQUEST { HTTP::redirect "https://example.test[HTTP::uri]" }'),
      insert_rule: rule('when HTTP_REQUEST {\n  HTTP::header insert X-Added yes\n  HTTP::uri /rewritten\n}'),
      answer_rule: rule('when HTTP_RESPONSE { HTTP::header insert X-Status [HTTP::status] }'),
    }) as never,
  });
  t.match(deployed.data, { results: [{ code: 200, message: 'success', tenant: 'T' }] });
  t.equal((deployed.data as any)?.results[0].warnings, undefined, 'no "not modelled" warning for iRules or iRule members that run');

  const answered = await answerThrough(hello);
  t.match(answered, { status: 200, body: 'hello' }, 'HTTP::respond answers');
  t.equal(echo.received.length, 0, 'no member was asked');

  const redirected = await answerThrough(redirect, { path: '/a?b=1' });
  t.match(redirected, { status: 302, headers: { location: 'https://example.test/a?b=1' } }, 'HTTP::redirect is a 302 with Location');

  t.equal(
    await through(insert, { path: '/original' }),
    'echo GET /rewritten yes',
    'the changed uri and the inserted header reach the member',
  );

  const changed = await answerThrough(answer);
  t.match(
    changed,
    { status: 200, body: 'echo GET / -', headers: { 'x-status': '200', 'x-from-member': 'yes' } },
    'HTTP_RESPONSE adds a field',
  );
});

t.test('a rule picks another pool of the tenant, by name or by path', async (t) => {
  const { client } = await deviceWithLogs(t);
  const [a, b] = await Promise.all([startMember(t, 'a'), startMember(t, 'b')]);
  const port = await freePort();
  const text = 'when HTTP_REQUEST {\n  if { [HTTP::path] eq "/b" } { pool p_b } elseif { [HTTP::path] eq "/path" } { pool /T/A1/p_b }\n}';
  const deployed = await sdk.deployDeclaration({
    client,
    body: declaration('T', { vs: service(port, 'p_a', ['pick']), p_a: pool(a.port), p_b: pool(b.port), pick: rule(text) }) as never,
  });
  t.equal(deployed.response?.status, 200, 'deployed');
  t.same(
    [await through(port, { path: '/' }), await through(port, { path: '/b' }), await through(port, { path: '/path' })],
    ['a', 'b', 'b'],
    "the service's own pool, then the other pool's member",
  );
});

t.test('reject resets the connection, drop closes it without an answer, CLIENT_ACCEPTED on accept', async (t) => {
  const { client } = await deviceWithLogs(t);
  const member = await startMember(t, 'm');
  const [rejecting, dropping, accepting] = [await freePort(), await freePort(), await freePort()];
  const deployed = await sdk.deployDeclaration({
    client,
    body: declaration('T', {
      reject_vs: service(rejecting, 'p', ['reject_rule']),
      drop_vs: service(dropping, 'p', ['drop_rule']),
      accept_vs: service(accepting, 'p', ['accept_rule']),
      p: pool(member.port),
      reject_rule: rule('when HTTP_REQUEST { reject }'),
      drop_rule: rule('when HTTP_REQUEST { drop }'),
      accept_rule: rule('when CLIENT_ACCEPTED { if { [IP::client_addr] eq "127.0.0.1" } { reject } }'),
    }) as never,
  });
  t.equal(deployed.response?.status, 200, 'deployed');
  t.same(await rawExchange(rejecting), { data: '', ended: 'reset' }, 'reject: a reset, no answer');
  t.same(await rawExchange(dropping), { data: '', ended: 'closed' }, 'drop: closed, no answer');
  t.same(await rawExchange(accepting), { data: '', ended: 'reset' }, 'CLIENT_ACCEPTED rejects the connection');
  t.equal(member.received.length, 0, 'no member was asked');
});

t.test('a rule past its budget is answered 500 and logged, and other clients are served meanwhile', async (t) => {
  const { client, logs } = await deviceWithLogs(t);
  const member = await startMember(t, 'm');
  const port = await freePort();
  const text = 'when HTTP_REQUEST {\n  if { [HTTP::path] eq "/loop" } { while { 1 } { set x 1 } }\n}';
  const deployed = await sdk.deployDeclaration({
    client,
    body: declaration('T', { vs: service(port, 'p', ['runaway']), p: pool(member.port), runaway: rule(text) }) as never,
  });
  t.equal(deployed.response?.status, 200, 'deployed');
  const [looping, served] = await Promise.all([
    answerThrough(port, { path: '/loop', headers: { 'x-secret': 'do-not-log' } }),
    answerThrough(port, { path: '/ok' }),
  ]);
  t.match(looping, { status: 500, headers: { 'content-type': 'application/json' } });
  if (looping !== 'refused') t.match(JSON.parse(looping.body), { code: 500, message: /rule/ }, "the data plane's own error shape");
  t.match(served, { status: 200, body: 'm' }, 'the other client is served');
  const line = logs.lines.find((l) => l.includes('rule failed'));
  t.match(line, /"service":"\/T\/A1\/vs".*"rule":"\/T\/A1\/runaway"/, 'the log names the service and the rule');
  t.notMatch(logs.text(), /do-not-log/, "the log never holds the request's content");
});

t.test("a Data_Group is what a rule's class match reads", async (t) => {
  const { client } = await deviceWithLogs(t);
  const member = await startMember(t, 'm');
  const port = await freePort();
  const text = 'when HTTP_REQUEST {\n  if { [class match [HTTP::path] equals blocked_paths] } { HTTP::respond 403 content blocked }\n}';
  const deployed = await sdk.deployDeclaration({
    client,
    body: declaration('T', {
      vs: service(port, 'p', ['guard']),
      p: pool(member.port),
      guard: rule(text),
      blocked_paths: { class: 'Data_Group', keyDataType: 'string', records: [{ key: '/admin', value: '' }] },
    }) as never,
  });
  t.equal(deployed.response?.status, 200, 'deployed');
  t.match(await answerThrough(port, { path: '/admin' }), { status: 403, body: 'blocked' });
  t.equal(await through(port, { path: '/public' }), 'm');
});

t.test('rules that cannot run fail their tenant when deployed, naming the rule, the command and the line', async (t) => {
  const { client } = await deviceWithLogs(t);
  const member = await startMember(t, 'm');
  const port = await freePort();
  const unknown = await sdk.deployDeclaration({
    client,
    body: declaration('T', {
      vs: service(port, 'p', ['bad']),
      p: pool(member.port),
      bad: rule('when HTTP_REQUEST {\n  set a 1\n  HTTP::frobnicate now\n}'),
    }) as never,
  });
  t.equal(unknown.response?.status, 422);
  t.match(unknown.error, {
    results: [
      {
        code: 422,
        message: 'declaration failed',
        tenant: 'T',
        response: '/T/A1/vs/iRules/0: 01070151:3: Rule [/T/A1/bad] error: line 3: unknown command "HTTP::frobnicate"',
      },
    ],
  });
  t.equal(await through(port), 'refused', 'nothing listens');

  const missing = await sdk.deployDeclaration({
    client,
    body: declaration('T', { vs: service(port, 'p', ['nowhere']), p: pool(member.port) }) as never,
  });
  t.match(missing.error, { results: [{ message: 'declaration failed', response: "/T/A1/vs/iRules/0: iRule 'nowhere' does not exist" }] });
  const notStored = await sdk.deployDeclaration({
    client,
    body: declaration('T', { vs: service(port, 'p', [{ bigip: '/Common/absent' }]), p: pool(member.port) }) as never,
  });
  t.match(notStored.error, {
    results: [{ response: '/T/A1/vs/iRules/0: 01020036:3: The requested rule (/Common/absent) was not found.' }],
  });
});

t.test('a script object stored on the device runs where a service names it by {bigip}', async (t) => {
  const { client } = await deviceWithLogs(t);
  const member = await startMember(t, 'm');
  const port = await freePort();
  const created = await sdk.createRule({
    client,
    body: { name: 'stored_hello', apiAnonymous: 'when HTTP_REQUEST { HTTP::respond 200 content stored }' },
  });
  t.equal(created.response?.status, 200);
  const body = declaration('T', { vs: service(port, 'p', [{ bigip: '/Common/stored_hello' }]), p: pool(member.port) });
  t.equal((await sdk.deployDeclaration({ client, body: body as never })).response?.status, 200);
  t.equal(await through(port), 'stored');

  // Changed on the device: the same declaration deployed again reads it anew (not "no change").
  await sdk.patchRule({
    client,
    path: { partition: 'Common', ruleName: 'stored_hello' },
    body: { apiAnonymous: 'when HTTP_REQUEST { HTTP::respond 200 content changed }' },
  });
  const again = await sdk.deployDeclaration({ client, body: body as never });
  t.match(again.data, { results: [{ message: 'success' }] });
  t.equal(await through(port), 'changed');
});
