import t from 'tap';
import { CONNECTION, request, runRules, sessionOf, testEnvironment } from './test-rules.ts';

const when = (body: string, event = 'HTTP_REQUEST') => `when ${event} {\n${body}\n}`;
const logged = (
  body: string,
  req = request('/a/b?x=1&y=2', [
    ['Host', 'www.example.com'],
    ['X-One', '1'],
    ['x-one', '2'],
  ]),
) => runRules(when(body), { request: req }).lines.map((line) => line.replace(/^rule1: /, ''));

t.test('HTTP::uri, HTTP::path, HTTP::query, HTTP::host, HTTP::method, HTTP::version read the request', async (t) => {
  t.same(logged('log "[HTTP::uri]|[HTTP::path]|[HTTP::query]|[HTTP::host]|[HTTP::method]|[HTTP::version]"'), [
    '/a/b?x=1&y=2|/a/b|x=1&y=2|www.example.com|GET|1.1',
  ]);
  t.same(logged('log "<[HTTP::query]>"', request('/plain')), ['<>'], 'no query is empty');
  t.same(logged('log "<[HTTP::host]>"', request('/', [])), ['<>'], 'no Host header is empty');
});

t.test('HTTP::uri, HTTP::path and HTTP::query set the target', async (t) => {
  t.equal(runRules(when('HTTP::uri /new?q=1'), { request: request('/old') }).request.uri, '/new?q=1');
  t.equal(runRules(when('HTTP::path /v2[HTTP::path]'), { request: request('/a?x=1') }).request.uri, '/v2/a?x=1', 'the query is kept');
  t.equal(runRules(when('HTTP::query z=9'), { request: request('/a?x=1') }).request.uri, '/a?z=9');
  t.equal(runRules(when('HTTP::query ""'), { request: request('/a?x=1') }).request.uri, '/a');
});

t.test('a target with a space or a line break is refused at run time (no request splitting)', async (t) => {
  const { outcome, request: changed } = runRules(when('HTTP::uri "/a HTTP/1.1\\r\\nX: y"'), { request: request('/old') });
  t.equal(outcome.kind, 'error');
  t.equal(changed.uri, '/old');
});

t.test('HTTP::header reads case-insensitively, the last of several', async (t) => {
  t.same(
    logged(
      'log "[HTTP::header value X-ONE]|[HTTP::header x-one]|[HTTP::header exists x-one]|[HTTP::header exists nope]|[HTTP::header count]|[HTTP::header count X-One]"',
    ),
    ['2|2|1|0|3|2'],
  );
  t.same(logged('log [HTTP::header names]'), ['Host X-One x-one']);
  t.same(logged('log [HTTP::header values x-one]'), ['1 2']);
  t.same(logged('log "<[HTTP::header Missing]>"'), ['<>']);
});

t.test('HTTP::header insert, replace and remove change the request headers in place', async (t) => {
  const run = (body: string) =>
    runRules(when(body), {
      request: request('/', [
        ['Host', 'h'],
        ['A', '1'],
        ['a', '2'],
      ]),
    }).request.headers;
  t.same(run('HTTP::header insert X-Forwarded-Proto https'), [
    ['Host', 'h'],
    ['A', '1'],
    ['a', '2'],
    ['X-Forwarded-Proto', 'https'],
  ]);
  t.same(run('HTTP::header insert lws B 1 C 2'), [
    ['Host', 'h'],
    ['A', '1'],
    ['a', '2'],
    ['B', '1'],
    ['C', '2'],
  ]);
  t.same(
    run('HTTP::header replace a 9'),
    [
      ['Host', 'h'],
      ['A', '1'],
      ['a', '9'],
    ],
    'replace changes the last one',
  );
  t.same(
    run('HTTP::header replace New v'),
    [
      ['Host', 'h'],
      ['A', '1'],
      ['a', '2'],
      ['New', 'v'],
    ],
    'or inserts',
  );
  t.same(run('HTTP::header remove A'), [['Host', 'h']], 'remove takes every one');
});

t.test('a header with a line break in its value, or a bad name, is refused at run time', async (t) => {
  t.equal(runRules(when('HTTP::header insert X-A "v\\r\\nSet-Cookie: x"')).outcome.kind, 'error');
  t.equal(runRules(when('HTTP::header insert "Bad Name" v')).outcome.kind, 'error');
  t.equal(runRules(when('HTTP::respond 200 "X:Y" v')).outcome.kind, 'error');
});

t.test('HTTP::respond answers with status, content, headers and a Server header unless noserver', async (t) => {
  t.same(runRules(when('HTTP::respond 503 content "down" Content-Type text/plain Retry-After 60')).outcome, {
    kind: 'respond',
    status: 503,
    body: 'down',
    headers: [
      ['Content-Type', 'text/plain'],
      ['Retry-After', '60'],
      ['Server', 'BIG-IP'],
    ],
  });
  t.same(runRules(when('HTTP::respond 200 noserver')).outcome, { kind: 'respond', status: 200, body: '', headers: [] });
  t.equal(runRules(when('HTTP::respond 99')).outcome.kind, 'error', 'a status out of range is an error');
});

t.test('HTTP::redirect answers 302 with Location', async (t) => {
  t.same(runRules(when('HTTP::redirect https://[HTTP::host][HTTP::uri]'), { request: request('/p?q') }).outcome, {
    kind: 'respond',
    status: 302,
    headers: [['Location', 'https://www.example.com/p?q']],
    body: '',
  });
});

t.test('the first answer of an event wins; a later one is logged as an error line', async (t) => {
  const { outcome, lines } = runRules([when('HTTP::redirect /first\nlog after'), when('HTTP::respond 404')]);
  t.same(outcome, { kind: 'respond', status: 302, headers: [['Location', '/first']], body: '' });
  // As on the real device, the commands after an answer and the other rules of the event still run.
  t.same(lines, ['rule1: after', 'rule2: error: a second answer ignored: this HTTP_REQUEST already chose a 302 answer']);
});

t.test('reject and drop', async (t) => {
  t.same(runRules(when('reject')).outcome, { kind: 'reject' });
  t.same(runRules(when('drop')).outcome, { kind: 'drop' });
  t.same(runRules(when('discard')).outcome, { kind: 'drop' });
});

t.test('HTTP_RESPONSE: HTTP::status and HTTP::header work on the answer', async (t) => {
  const response = { status: 404, headers: [['Server', 'x'] as [string, string]] };
  const {
    outcome,
    response: changed,
    lines,
  } = runRules(when('log [HTTP::status]\nHTTP::header remove Server\nHTTP::header insert X-Status [HTTP::status]', 'HTTP_RESPONSE'), {
    event: 'HTTP_RESPONSE',
    response,
  });
  t.same(outcome, { kind: 'continue' });
  t.same(lines, ['rule1: 404']);
  t.same(changed?.headers, [['X-Status', '404']]);
  t.equal(runRules(when('log [HTTP::status]')).outcome.kind, 'error', 'HTTP::status is not valid in HTTP_REQUEST');
});

t.test('HTTP commands in CLIENT_ACCEPTED are errors: there is no request yet', async (t) => {
  const { session } = sessionOf(when('log [HTTP::uri]', 'CLIENT_ACCEPTED'));
  t.equal(session.run('CLIENT_ACCEPTED', { connection: CONNECTION }).kind, 'error');
});

t.test('pool picks a pool of the tenant, for the rest of the connection', async (t) => {
  const { session } = sessionOf(when('if {[HTTP::uri] starts_with "/api"} { pool api_pool }'));
  t.same(session.run('HTTP_REQUEST', { connection: CONNECTION, request: request('/api/x') }), { kind: 'continue', pool: 'api_pool' });
  t.same(session.run('HTTP_REQUEST', { connection: CONNECTION, request: request('/web') }), { kind: 'continue', pool: 'api_pool' });
  t.match(runRules(when('pool other_tenants_pool')).outcome, { kind: 'error', message: /no such pool "other_tenants_pool"/ });
});

t.test('IP::client_addr, IP::remote_addr, IP::local_addr, TCP::client_port, TCP::local_port', async (t) => {
  t.same(logged('log "[IP::client_addr] [IP::remote_addr] [IP::local_addr] [TCP::client_port] [TCP::local_port]"'), [
    '192.0.2.10 192.0.2.10 198.51.100.1 40000 80',
  ]);
});

t.test('log accepts a facility and writes the message with the rule name', async (t) => {
  t.same(logged('log local0. "hello [HTTP::path]"'), ['hello /a/b']);
  t.same(logged(`log [string repeat x 2000]`), [`${'x'.repeat(1024)}...`], 'long lines are cut');
});

t.test('event disable stops this rule’s handling of the event for the connection; other rules go on', async (t) => {
  const { session, environment } = sessionOf([when('log one\nevent disable'), when('log two')]);
  session.run('HTTP_REQUEST', { connection: CONNECTION, request: request() });
  session.run('HTTP_REQUEST', { connection: CONNECTION, request: request() });
  t.same(environment.lines, ['rule1: one', 'rule2: two', 'rule2: two']);
});

t.test('event NAME disable, event disable all, event NAME enable, event name', async (t) => {
  const { session, environment } = sessionOf(
    `${when('log "accepted in [event name]"\nevent HTTP_RESPONSE disable', 'CLIENT_ACCEPTED')}\n${when('log req\nevent disable all')}\n${when('log resp', 'HTTP_RESPONSE')}`,
  );
  session.run('CLIENT_ACCEPTED', { connection: CONNECTION });
  session.run('HTTP_RESPONSE', { connection: CONNECTION, request: request(), response: { status: 200, headers: [] } });
  session.run('HTTP_REQUEST', { connection: CONNECTION, request: request() });
  session.run('HTTP_REQUEST', { connection: CONNECTION, request: request() });
  t.same(environment.lines, ['rule1: accepted in CLIENT_ACCEPTED', 'rule1: req']);
  const again = sessionOf(
    `${when('event disable')}\n${when('log back\nevent HTTP_REQUEST enable', 'HTTP_RESPONSE')}\n${when('log req', 'HTTP_REQUEST')}`,
  );
  again.session.run('HTTP_REQUEST', { connection: CONNECTION, request: request() });
  again.session.run('HTTP_RESPONSE', { connection: CONNECTION, request: request(), response: { status: 200, headers: [] } });
  again.session.run('HTTP_REQUEST', { connection: CONNECTION, request: request() });
  t.same(again.environment.lines, ['rule1: back'], 'the rule disabled its two HTTP_REQUEST blocks, and enabled them again');
});

t.test('class match and class lookup against the data groups', async (t) => {
  const environment = () =>
    testEnvironment({
      dataGroups: {
        hosts: {
          type: 'string',
          records: [
            { key: 'a.example', value: 'pool_a' },
            { key: 'b.example', value: 'pool_b' },
          ],
        },
        prefixes: {
          type: 'string',
          records: [
            { key: '/api', value: 'api' },
            { key: '/api/v2', value: 'v2' },
          ],
        },
        nets: { type: 'address', records: [{ key: '192.0.2.0/24', value: 'doc' }] },
        codes: { type: 'integer', records: [{ key: '404', value: 'nf' }] },
      },
    });
  const log = (body: string) => runRules(when(body), { environment: environment() }).lines.map((l) => l.replace(/^rule1: /, ''));
  t.same(log('log [class match a.example equals hosts]'), ['1']);
  t.same(log('log [class match c.example equals hosts]'), ['0']);
  t.same(log('log [class lookup b.example hosts]'), ['pool_b']);
  t.same(log('log [class match -value /api/v2/x starts_with prefixes]'), ['v2'], 'the longest key wins');
  t.same(log('log [class match -name /x/api/v1 contains prefixes]'), ['/api']);
  t.same(log('log [class match [IP::client_addr] equals nets]'), ['1'], 'an address in a network');
  t.same(log('log [class match 198.51.100.7 equals nets]'), ['0']);
  t.same(log('log [class match 0404 equals codes]'), ['0'], '0404 is octal, so not 404');
  t.same(log('log [class match 404 equals codes]'), ['1']);
  t.same(log('log [class exists hosts][class exists nope]'), ['10']);
  t.match(runRules(when('class match x equals nope'), { environment: environment() }).outcome, {
    kind: 'error',
    message: /no such data group "nope"/,
  });
});
