import t from 'tap';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { findFreePorts } from '../lib/free-ports.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { runSnapshotCli, runSnapshotCommand } from './snapshot.ts';

// A fake login role and diagnostics role on ephemeral ports that answer as specs/snapshots.yaml says (the real
// roles are not wired yet). The client is driven in this process with an injected sleep: no test waits.

const USER = 'ops@example.com';
const PASSWORD = 'S3cret-Pa55word';
const ADMIN_PASSWORD = 'Adm1n-Pa55word';
const SESSION = 'ssosession=tok-4f2a';
const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(150_000), Buffer.from('\n%%EOF\n')]);
const CSV = Buffer.from(
  'name,h_importance,match,h_header\r\n"disk-full",critical,true,"Disk ""/var"" is full"\r\nntp-unsynced,low,true,NTP é\r\n',
);
const main = fileURLToPath(new URL('main.ts', import.meta.url));

type Seen = { method: string; url: string; headers: IncomingHttpHeaders; body: Buffer };

const diagnostic = (name: string, importance: string, match = true) => ({
  name,
  output: match ? [`${name} matched`] : [],
  run_data: { h_importance: importance, match },
  results: {
    h_action: 'act',
    h_name: name,
    h_header: `Header of ${name}`,
    h_summary: 'summary',
    h_sols: ['https://example.com/kb/1'],
    h_cve_ids: [],
  },
});

const DIAGNOSTICS = [
  diagnostic('log-rotation-off', 'low'),
  diagnostic('disk-nearly-full', 'critical'),
  diagnostic('weak-ciphers', 'medium'),
  diagnostic('ntp-unsynced', 'low', false),
  diagnostic('admin-default-password', 'high'),
  diagnostic('core-files-present', 'critical'),
];

const record = (id: string, status: 'COMPLETE' | 'ERROR', messages: string[] = []) => ({
  id,
  files: `http://x/snapshot-analyzer/api/snapshots/${id}/files`,
  commands: `http://x/snapshot-analyzer/api/snapshots/${id}/commands`,
  gui_uri: `http://x/snapshot-analyzer/gui/snapshots/${id}`,
  chassis_serial: status === 'COMPLETE' ? 'PTL-0001-4242' : '',
  hostname: status === 'COMPLETE' ? 'device-1.example.net' : '',
  visible_in_gui: true,
  description: '',
  support_case: '',
  generation_date: '2026-11-02T09:30:00Z',
  upload: { performed_by: { name: USER, email: USER }, date: '2026-11-02T09:31:00Z' },
  expiration_date: '2027-11-02T09:31:00Z',
  processing_status: status,
  processing_messages: messages,
  file_size: 10,
  file_name: 'x.tgz',
  diagnostics: `http://x/snapshot-analyzer/api/snapshots/${id}/diagnostics`,
});

/** What GET of each snapshot answers, poll after poll (the last answer repeats). */
const POLLS: Record<string, number[]> = { '41': [202, 202, 200], '13': [202, 422], '99': [202], '77': [500], '0': [200] };

function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string | string[]> = {}) {
  const bytes = body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    ...(body !== undefined && !Buffer.isBuffer(body) ? { 'content-type': JSON_TYPE } : {}),
    'content-length': String(bytes.length),
    ...headers,
  });
  res.end(bytes);
}

type Handler = (seen: Seen, res: ServerResponse) => void;

/** A server on `port` (0: a free one), closed at teardown; rejects when the port is taken. */
async function listen(t: TapTest, handle: Handler, port = 0) {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
    seen.push(request);
    handle(request, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

/**
 * Two servers on neighbouring free ports (p, p + 1), as a start puts the diagnostics and login roles: the
 * first on a port the OS picks, the second on the next one when it is free (else both again elsewhere).
 */
async function listenNeighbours(t: TapTest, first: Handler, second: (firstUrl: string) => Handler) {
  for (let attempt = 0; ; attempt++) {
    const a = await listen(t, first);
    const port = Number(new URL(a.url).port) + 1;
    const b = await listen(t, second(a.url), port).catch((error: unknown) => {
      if (attempt >= 20) throw error;
      return undefined;
    });
    if (b) return [a, b] as const;
  }
}

/** The login role (form login, 302 with the session cookies) and the diagnostics role (on neighbouring ports with `neighbours`). */
async function fakeSystem(t: TapTest, options: { loginStatus?: number; withoutSuccessCookie?: boolean; neighbours?: boolean } = {}) {
  const polls = new Map<string, number>();
  let diagnosticsUrl = '';
  const diagnosticsRole: Handler = ({ method, url, headers }, res) => {
    const path = new URL(url, 'http://x').pathname;
    if (!headers.cookie?.includes(SESSION))
      return send(res, 403, { code: 403, message: 'A session is required: log in at the login server and send its cookies.' });
    const one = /^\/snapshot-analyzer\/api\/snapshots\/([^/]+)(\/diagnostics)?$/.exec(path);
    if (path === '/snapshot-analyzer/api/snapshots') {
      if (method === 'GET') return send(res, 200, { id: ['0', '41', '42'] });
      if (method === 'POST') return send(res, 302, undefined, { location: `${diagnosticsUrl}/snapshot-analyzer/api/snapshots/41` });
      if (method === 'DELETE') return send(res, 200, { id: ['41', '42'] });
    }
    if (one && !one[2]) {
      const id = one[1]!;
      if (method === 'DELETE')
        return id === '0'
          ? send(res, 403, { code: 403, message: 'Snapshot 0 is the shared sample snapshot and is read-only.' })
          : send(res, 200, { id: [id] });
      if (method === 'PUT') return send(res, 200, record(id, 'COMPLETE'));
      const script = POLLS[id] ?? [404];
      const n = polls.get(id) ?? 0;
      polls.set(id, n + 1);
      const status = script[Math.min(n, script.length - 1)]!;
      if (status === 202)
        return send(res, 202, { id, processing_status: 'PROCESSING', message: 'still processing' }, { 'retry-after': '2' });
      if (status === 200) return send(res, 200, record(id, 'COMPLETE'));
      if (status === 422)
        return send(
          res,
          422,
          record(id, 'ERROR', ['the archive is not gzip data (a snapshot is a gzip-compressed tar archive)', 'second message']),
        );
      return send(res, status, { code: status, message: status === 500 ? 'database unavailable' : `Snapshot ${id} was not found.` });
    }
    if (one?.[2]) {
      const id = one[1]!;
      if (id === '99') return send(res, 202, { id, processing_status: 'PROCESSING', message: 'still processing' });
      const accept = headers.accept ?? '';
      if (accept === 'application/pdf') return send(res, 200, PDF, { 'content-type': 'application/pdf' });
      if (accept === 'text/csv') return send(res, 200, CSV, { 'content-type': 'text/csv; charset=utf-8' });
      const set = new URL(url, 'http://x').searchParams.get('set') ?? 'all';
      const listed = DIAGNOSTICS.filter((d) => set === 'all' || d.run_data.match === (set === 'hit'));
      return send(res, 200, {
        diagnostics: { filter: set, hit_count: 5, miss_count: 1, diagnostic: listed },
        system_information: { hostname: 'device-1.example.net', chassis_serial: 'PTL-0001-4242', platform: 'portolan-reference' },
        version: '2026.11.1',
      });
    }
    send(res, 404, { code: 404, message: 'no such route' });
  };
  const loginRole: Handler = ({ method, url, body }, res) => {
    if (method !== 'POST' || url !== '/resource/loginAction.jsp') return send(res, 404, { code: 404, message: 'no such route' });
    if (options.loginStatus) return send(res, options.loginStatus, { code: options.loginStatus, message: 'Not implemented yet.' });
    const form = new URLSearchParams(body.toString());
    const known =
      (form.get('userid') === USER && form.get('passwd') === PASSWORD) ||
      (form.get('userid') === 'admin' && form.get('passwd') === ADMIN_PASSWORD);
    if (!known) return send(res, 401, { code: 401, message: 'Invalid user id or password.' });
    const cookies = [`${SESSION}; Path=/; HttpOnly; SameSite=Lax`, ...(options.withoutSuccessCookie ? [] : ['sso_completed=1; Path=/'])];
    send(res, 302, undefined, { 'set-cookie': cookies, location: `${diagnosticsUrl}/snapshot-analyzer/api/snapshots` });
  };
  const [diagnostics, login] = options.neighbours
    ? await listenNeighbours(t, diagnosticsRole, () => loginRole)
    : [await listen(t, diagnosticsRole), await listen(t, loginRole)];
  diagnosticsUrl = diagnostics.url;
  const credentials = { PORTOLAN_DIAGNOSTICS_USER: USER, PORTOLAN_DIAGNOSTICS_PASSWORD: PASSWORD };
  const env = { PORTOLAN_DIAGNOSTICS_URL: diagnostics.url, PORTOLAN_LOGIN_URL: login.url, ...credentials };
  return { diagnostics, login, env, credentials };
}

/** Runs the command with a sleep that only records; checks what every run must hold (no password, no stack). */
async function cli(t: TapTest, env: Record<string, string | undefined>, args: string[]) {
  const sleeps: number[] = [];
  const result = await runSnapshotCli(args, { env, sleep: async (ms) => void sleeps.push(ms) });
  const output = result.stdout + result.stderr;
  t.notOk(output.includes(PASSWORD) || output.includes(ADMIN_PASSWORD), 'no password in any output');
  t.notMatch(output, /^\s+at /m, 'no stack trace');
  return { ...result, sleeps };
}

const lines = (text: string) => text.split('\n').filter(Boolean);

t.test('upload logs in, streams the file as the multipart field snapshot with the session cookies and prints the id alone', async (t) => {
  const system = await fakeSystem(t);
  const file = join(t.testdir(), 'device-1 snapshot.tgz');
  const bytes = randomBytes(3 * 1024 * 1024 + 17);
  writeFileSync(file, bytes);

  const run = await cli(t, system.env, ['upload', file]);
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout, '41\n', 'the id alone on stdout: ID=$(portolan snapshot upload x.tgz)');
  t.equal(run.stderr, `snapshot 41 uploaded: ${system.diagnostics.url}/snapshot-analyzer/api/snapshots/41\n`, 'the message on stderr');

  const [login] = system.login.seen;
  t.equal(login!.headers['content-type'], 'application/x-www-form-urlencoded');
  t.same(Object.fromEntries(new URLSearchParams(login!.body.toString())), { userid: USER, passwd: PASSWORD }, 'the form of the seed');

  const upload = system.diagnostics.seen.find((r) => r.method === 'POST')!;
  t.match(upload.headers.cookie, SESSION, 'the session cookie is sent');
  t.match(upload.headers.cookie, 'sso_completed=1', 'every cookie of the login is sent');
  const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(upload.headers['content-type'] ?? '')?.[1];
  t.ok(boundary, 'a multipart body');
  t.equal(Number(upload.headers['content-length']), upload.body.length, 'its exact length is declared up front');
  const start = upload.body.indexOf('\r\n\r\n') + 4;
  const head = upload.body.subarray(0, start).toString();
  t.match(head, 'Content-Disposition: form-data; name="snapshot"; filename="device-1 snapshot.tgz"');
  t.match(head, 'Content-Type: application/octet-stream');
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  t.ok(upload.body.subarray(-tail.length).equals(tail), 'closed by the final boundary');
  t.ok(upload.body.subarray(start, upload.body.length - tail.length).equals(bytes), 'the part holds exactly the file');
});

t.test('upload --wait --description sets the description, then polls every 2 s while 202 and stops on 200', async (t) => {
  const system = await fakeSystem(t);
  const file = join(t.testdir(), 'a.tgz');
  writeFileSync(file, 'not really a snapshot');

  const run = await cli(t, system.env, ['upload', file, '--wait', '--description', 'Before the upgrade']);
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout, '41\n', 'still the id alone on stdout');
  t.same(
    lines(run.stderr),
    [
      `snapshot 41 uploaded: ${system.diagnostics.url}/snapshot-analyzer/api/snapshots/41`,
      'snapshot 41: description set',
      'snapshot 41: PROCESSING (poll 1 of at most 150)',
      'snapshot 41: PROCESSING (poll 2 of at most 150)',
      'snapshot 41 is ready: device-1.example.net, chassis PTL-0001-4242',
    ],
    'messages and a progress line per poll on stderr (not a terminal)',
  );
  t.same(run.sleeps, [2000, 2000], 'two waits of the default interval between three polls');
  const put = system.diagnostics.seen.find((r) => r.method === 'PUT')!;
  t.same(JSON.parse(put.body.toString()), { description: 'Before the upgrade' });
  t.equal(system.diagnostics.seen.filter((r) => r.method === 'GET').length, 3);
  t.ok(
    system.diagnostics.seen.every((r) => r.headers.cookie?.includes(SESSION)),
    'every request carries the session',
  );
});

t.test('wait reports a failed snapshot (422) with its processing messages and exits 1', async (t) => {
  const system = await fakeSystem(t);
  const run = await cli(t, system.env, ['wait', '13']);
  t.equal(run.code, 1);
  t.same(lines(run.stderr), [
    'snapshot 13: PROCESSING (poll 1 of at most 150)',
    'snapshot 13 failed (422, processing_status ERROR): the archive is not gzip data (a snapshot is a gzip-compressed tar archive); second message',
  ]);
  t.equal(run.stdout, '');
  t.same(run.sleeps, [2000]);
});

t.test('wait exits 3 when polling is exhausted, with the injected interval', async (t) => {
  const system = await fakeSystem(t);
  const run = await cli(t, system.env, ['wait', '99', '--max-polls', '3']);
  t.equal(run.code, 3);
  t.same(lines(run.stderr), [
    'snapshot 99: PROCESSING (poll 1 of at most 3)',
    'snapshot 99: PROCESSING (poll 2 of at most 3)',
    'snapshot 99: PROCESSING (poll 3 of at most 3)',
    'snapshot 99 still processing after 3 polls',
  ]);
  t.same(run.sleeps, [2000, 2000], 'no sleep after the last poll');

  const faster = await cli(t, system.env, ['wait', '99', '--max-polls', '2', '--interval', '0.5']);
  t.equal(faster.code, 3);
  t.same(faster.sleeps, [500]);
});

t.test('wait stops on any other status and reports it with the server message', async (t) => {
  const system = await fakeSystem(t);
  const run = await cli(t, system.env, ['wait', '77']);
  t.equal(run.code, 1);
  t.equal(run.stderr, 'reading snapshot 77 failed: the diagnostics role answered 500 Internal Server Error: database unavailable\n');
  t.same(run.sleeps, []);
});

t.test('hits prints a plain table ordered critical, high, medium, low', async (t) => {
  const system = await fakeSystem(t);
  const run = await cli(t, system.env, ['hits', '41']);
  t.equal(run.code, 0, run.stderr);
  t.same(lines(run.stdout), [
    'snapshot 41 (device-1.example.net): 5 hits, 1 miss; rule set 2026.11.1',
    'IMPORTANCE  NAME                    HEADER',
    'critical    disk-nearly-full        Header of disk-nearly-full',
    'critical    core-files-present      Header of core-files-present',
    'high        admin-default-password  Header of admin-default-password',
    'medium      weak-ciphers            Header of weak-ciphers',
    'low         log-rotation-off        Header of log-rotation-off',
  ]);
  t.notMatch(run.stdout, '\u001b', 'no colour when stdout is not a terminal');
  t.match(system.diagnostics.seen.at(-1)!.url, '/snapshot-analyzer/api/snapshots/41/diagnostics?set=hit');

  const all = await cli(t, system.env, ['hits', '41', '--set', 'all']);
  t.match(lines(all.stdout)[1], /^IMPORTANCE {2}RESULT {2}NAME/);
  t.match(all.stdout, /low {9}miss {4}ntp-unsynced/);

  const onTerminal = async (env: Record<string, string>) => {
    const terminal = Object.assign(new PassThrough(), { isTTY: true });
    let shown = '';
    terminal.on('data', (chunk: Buffer) => (shown += chunk));
    t.equal(await runSnapshotCommand(['hits', '41'], { env, stdout: terminal, stderr: new PassThrough() }), 0);
    return shown;
  };
  t.match(await onTerminal(system.env), '\u001b[31m', 'importance in colour on a terminal');
  t.notMatch(await onTerminal({ ...system.env, NO_COLOR: '1' }), '\u001b', 'NO_COLOR is honoured');

  const processing = await cli(t, system.env, ['hits', '99']);
  t.equal(processing.code, 1);
  t.equal(processing.stderr, "snapshot 99 is still processing: run 'portolan snapshot wait 99' first\n");
});

t.test('report downloads the PDF and the CSV byte for byte, asking for each by Accept', async (t) => {
  const system = await fakeSystem(t);
  const dir = t.testdir();
  const pdf = await cli(t, system.env, ['report', '41', '--format', 'pdf', '--out', join(dir, 'r.pdf')]);
  t.equal(pdf.code, 0, pdf.stderr);
  t.ok(readFileSync(join(dir, 'r.pdf')).equals(PDF), 'the exact PDF bytes');
  t.equal(pdf.stderr, `wrote ${PDF.length} bytes (application/pdf) to ${join(dir, 'r.pdf')}\n`);
  t.equal(pdf.stdout, '', 'nothing on stdout when the report goes to a file');
  t.equal(system.diagnostics.seen.at(-1)!.headers.accept, 'application/pdf');

  const csv = await cli(t, system.env, ['report', '41', '--format', 'csv', '--out', join(dir, 'r.csv'), '--set', 'hit']);
  t.equal(csv.code, 0, csv.stderr);
  t.ok(readFileSync(join(dir, 'r.csv')).equals(CSV), 'the exact CSV bytes');
  t.equal(system.diagnostics.seen.at(-1)!.headers.accept, 'text/csv');
  t.match(system.diagnostics.seen.at(-1)!.url, '?set=hit');
  t.same(readdirSync(dir).sort(), ['r.csv', 'r.pdf'], 'no temporary file is left');

  const nowhere = await cli(t, system.env, ['report', '41', '--format', 'csv', '--out', join(dir, 'missing', 'r.csv')]);
  t.equal(nowhere.code, 1);
  t.equal(lines(nowhere.stderr).length, 1);
  t.match(nowhere.stderr, `downloading the report to ${join(dir, 'missing', 'r.csv')} failed (ENOENT)`);

  const usage = await cli(t, system.env, ['report', '41', '--format', 'xml', '--out', join(dir, 'r.xml')]);
  t.equal(usage.code, 2, 'a format other than pdf or csv is a usage error');
  t.notOk(existsSync(join(dir, 'r.xml')));
});

t.test('list, delete and delete-all print what the diagnostics role answered', async (t) => {
  const system = await fakeSystem(t);
  t.same(lines((await cli(t, system.env, ['list'])).stdout), ['0', '41', '42']);
  t.equal((await cli(t, system.env, ['delete', '41'])).stdout, 'snapshot 41 deleted\n');
  const all = await cli(t, system.env, ['delete-all']);
  t.equal(all.stdout, '2 snapshots deleted: 41 42 (the shared sample snapshot 0 stays)\n');
  const sample = await cli(t, system.env, ['delete', '0']);
  t.equal(sample.code, 1);
  t.equal(
    sample.stderr,
    'deleting snapshot 0 failed: the diagnostics role answered 403 Forbidden: Snapshot 0 is the shared sample snapshot and is read-only.\n',
  );
});

t.test('missing credentials: one line naming the variables, and no request', async (t) => {
  const system = await fakeSystem(t);
  const none = await cli(t, { PORTOLAN_DIAGNOSTICS_URL: system.diagnostics.url, PORTOLAN_LOGIN_URL: system.login.url }, ['list']);
  t.equal(none.code, 2);
  t.equal(
    none.stderr,
    'missing credentials: set PORTOLAN_DIAGNOSTICS_USER and PORTOLAN_DIAGNOSTICS_PASSWORD (or PORTOLAN_ADMIN_PASSWORD)\n',
  );
  const half = await cli(t, { ...system.env, PORTOLAN_DIAGNOSTICS_PASSWORD: undefined }, ['list']);
  t.equal(half.code, 2);
  t.equal(half.stderr, 'missing credentials: set both PORTOLAN_DIAGNOSTICS_USER / PORTOLAN_DIAGNOSTICS_PASSWORD\n');
  t.equal(system.login.seen.length + system.diagnostics.seen.length, 0);

  const admin = await cli(
    t,
    { PORTOLAN_DIAGNOSTICS_URL: system.diagnostics.url, PORTOLAN_LOGIN_URL: system.login.url, PORTOLAN_ADMIN_PASSWORD: ADMIN_PASSWORD },
    ['list'],
  );
  t.equal(admin.code, 0, 'the administrative account (user admin by default) is the fallback');
  t.equal(new URLSearchParams(system.login.seen.at(-1)!.body.toString()).get('userid'), 'admin');
});

t.test('a refused login is one line naming the credential variables', async (t) => {
  const system = await fakeSystem(t);
  const wrong = await cli(t, { ...system.env, PORTOLAN_DIAGNOSTICS_PASSWORD: `${PASSWORD}x` }, ['list']);
  t.equal(wrong.code, 1);
  t.equal(wrong.stderr, 'login failed: check PORTOLAN_DIAGNOSTICS_USER / PORTOLAN_DIAGNOSTICS_PASSWORD\n');
  t.notOk(wrong.stderr.includes(`${PASSWORD}x`));
  t.equal(system.diagnostics.seen.length, 0, 'nothing is asked of the diagnostics role without a session');

  const admin = await cli(
    t,
    { PORTOLAN_DIAGNOSTICS_URL: system.diagnostics.url, PORTOLAN_LOGIN_URL: system.login.url, PORTOLAN_ADMIN_PASSWORD: 'wrong-one' },
    ['list'],
  );
  t.equal(admin.stderr, 'login failed: check PORTOLAN_ADMIN_USER / PORTOLAN_ADMIN_PASSWORD\n');

  const noMarker = await fakeSystem(t, { withoutSuccessCookie: true });
  const unmarked = await cli(t, noMarker.env, ['list']);
  t.equal(unmarked.code, 1);
  t.equal(
    unmarked.stderr,
    'login failed: check PORTOLAN_DIAGNOSTICS_USER / PORTOLAN_DIAGNOSTICS_PASSWORD\n',
    'a 302 without sso_completed=1 is no login',
  );

  const unwired = await fakeSystem(t, { loginStatus: 501 });
  const notYet = await cli(t, unwired.env, ['list']);
  t.equal(notYet.code, 1);
  t.equal(
    notYet.stderr,
    `login failed: ${unwired.login.url} answered 501: Not implemented yet.; is it the login role? (PORTOLAN_LOGIN_URL)\n`,
  );
});

t.test('an unreachable role is one line naming the URL setting', async (t) => {
  const system = await fakeSystem(t);
  const [closed] = await findFreePorts(1);
  const diagnostics = await cli(t, { ...system.env, PORTOLAN_DIAGNOSTICS_URL: `http://127.0.0.1:${closed}` }, ['list']);
  t.equal(diagnostics.code, 1);
  t.equal(
    diagnostics.stderr,
    `cannot reach http://127.0.0.1:${closed} (ECONNREFUSED): is the diagnostics role running? (PORTOLAN_DIAGNOSTICS_URL)\n`,
  );

  const login = await cli(t, { ...system.env, PORTOLAN_LOGIN_URL: `http://127.0.0.1:${closed}` }, ['list']);
  t.equal(login.stderr, `cannot reach http://127.0.0.1:${closed} (ECONNREFUSED): is the login role running? (PORTOLAN_LOGIN_URL)\n`);

  const bad = await cli(t, { ...system.env, PORTOLAN_DIAGNOSTICS_URL: 'ftp://example.com' }, ['list']);
  t.equal(bad.code, 2);
  t.equal(bad.stderr, 'PORTOLAN_DIAGNOSTICS_URL must be an http or https URL\n');
  const embedded = await cli(t, { ...system.env, PORTOLAN_LOGIN_URL: `http://ops:${PASSWORD}@127.0.0.1:1` }, ['list']);
  t.equal(embedded.code, 2);
  t.equal(
    embedded.stderr,
    'PORTOLAN_LOGIN_URL must not hold a user or password: set PORTOLAN_DIAGNOSTICS_USER and PORTOLAN_DIAGNOSTICS_PASSWORD\n',
  );
});

t.test('usage errors are one line and a pointer to --help, exit 2; --help on each subcommand exits 0', async (t) => {
  const system = await fakeSystem(t);
  for (const [args, line, command] of [
    [
      ['wait', 'no/such'],
      /^portolan snapshot wait: command-argument value 'no\/such' is invalid for argument 'id'\. a snapshot id is/,
      'wait',
    ],
    [['wait', '41', '--interval', '0'], /^portolan snapshot wait: option '--interval <seconds>' argument '0' is invalid/, 'wait'],
    [['wait', '41', '--max-polls', '1.5'], /^portolan snapshot wait: option '--max-polls <count>' argument '1\.5' is invalid/, 'wait'],
    [
      ['hits', '41', '--set', 'some'],
      /^portolan snapshot hits: option '--set <set>' argument 'some' is invalid\. Allowed choices are hit, miss, all\.$/,
      'hits',
    ],
    [['report', '41', '--out', 'x.pdf'], /^portolan snapshot report: required option '--format <format>' not specified$/, 'report'],
    [
      ['report', '41', '--format', 'csv', '--json'],
      /^portolan snapshot report: --json needs --out <file> \(without it, the report itself goes to stdout\)$/,
      'report',
    ],
    [['upload'], /^portolan snapshot upload: missing required argument 'file'$/, 'upload'],
    [['list', '--jsn'], /^portolan snapshot list: unknown option '--jsn' \(Did you mean --json\?\)$/, 'list'],
    [['frobnicate'], /^portolan snapshot: unknown command 'frobnicate'$/, ''],
    [
      ['list', '--target', 'ftp://example.com'],
      /^portolan snapshot: option '--target <url>' argument 'ftp:\/\/example\.com' is invalid\. must be an http or https URL\.$/,
      '',
    ],
  ] as const) {
    const run = await cli(t, system.env, [...args]);
    t.equal(run.code, 2, `${args.join(' ')}: usage error`);
    const [first, pointer, ...rest] = lines(run.stderr);
    t.match(first, line, args.join(' '));
    t.equal(pointer, `Run 'portolan snapshot${command ? ` ${command}` : ''} --help' for usage.`);
    t.same(rest, [], 'two lines, never the whole help');
    t.equal(run.stdout, '');
  }
  const missing = await cli(t, system.env, ['upload', join(t.testdir(), 'absent.tgz')]);
  t.equal(missing.code, 2);
  t.equal(missing.stderr, `cannot read ${join(t.testdir(), 'absent.tgz')} (ENOENT)\n`);
  for (const command of ['upload', 'wait', 'hits', 'report', 'list', 'delete', 'delete-all']) {
    const help = await cli(t, {}, [command, '--help']);
    t.equal(help.code, 0);
    t.match(help.stdout, `Usage: portolan snapshot ${command}`);
    t.match(help.stdout, 'PORTOLAN_DIAGNOSTICS_PASSWORD');
    t.match(help.stdout, /--target <url> +any role of a running Portolan system/, 'the global --target is listed');
    t.match(help.stdout, /PORTOLAN_DIAGNOSTICS_URL, PORTOLAN_LOGIN_URL\n +set only to override what is found/);
    t.match(help.stdout, /PORTOLAN_HOST, PORTOLAN_PORT_OFFSET, PORTOLAN_DIAGNOSTICS_PORT, PORTOLAN_LOGIN_PORT/);
    t.equal(help.stderr, '');
  }
  const bare = await cli(t, {}, []);
  t.equal(bare.code, 0, 'portolan snapshot alone shows its help');
  t.match(bare.stdout, /^Usage: portolan snapshot \[options\] \[command\]/);
  t.equal(system.login.seen.length, 0, 'no login for a usage error');
});

t.test('on a terminal the upload shows a progress bar on stderr; stdout keeps only the result', async (t) => {
  const system = await fakeSystem(t);
  const file = join(t.testdir(), 'big.tgz');
  writeFileSync(file, randomBytes(2 * 1024 * 1024));
  const terminal = Object.assign(new PassThrough(), { isTTY: true, columns: 100 });
  let drawn = '';
  terminal.on('data', (chunk: Buffer) => (drawn += chunk));
  const stdout = new PassThrough();
  let printed = '';
  stdout.on('data', (chunk: Buffer) => (printed += chunk));
  const code = await runSnapshotCommand(['upload', file], { env: system.env, stdout, stderr: terminal });
  t.equal(code, 0);
  t.match(drawn, /uploading big\.tgz \[.*\] 100% 2\.1\/2\.1 MB/);
  t.equal(printed, '41\n');
  t.match(drawn, `snapshot 41 uploaded: ${system.diagnostics.url}/snapshot-analyzer/api/snapshots/41\n`);
});

/** A terminal: a stream that says it is one, and what was drawn on it. */
function terminal() {
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 100 });
  let drawn = '';
  stream.on('data', (chunk: Buffer) => (drawn += chunk));
  return { stream, drawn: () => drawn };
}

t.test('--json: one JSON document on stdout with the fields of each command', async (t) => {
  const system = await fakeSystem(t);
  const file = join(t.testdir(), 'a.tgz');
  writeFileSync(file, 'not really a snapshot');
  const location = `${system.diagnostics.url}/snapshot-analyzer/api/snapshots/41`;

  const uploaded = await cli(t, system.env, ['upload', file, '--json']);
  t.equal(uploaded.code, 0, uploaded.stderr);
  t.same(JSON.parse(uploaded.stdout), { id: '41', location });

  const waited = await cli(t, system.env, ['upload', file, '--wait', '--description', 'Before', '--json']);
  t.equal(waited.code, 0, waited.stderr);
  t.match(JSON.parse(waited.stdout), {
    id: '41',
    location,
    description: 'Before',
    status: 'ready',
    polls: 3,
    snapshot: { id: '41', processing_status: 'COMPLETE', hostname: 'device-1.example.net' },
  });
  t.match(waited.stderr, 'snapshot 41: PROCESSING (poll 2 of at most 150)', 'progress still on stderr');

  const failed = await cli(t, system.env, ['wait', '13', '--json']);
  t.equal(failed.code, 1, 'exit codes unchanged');
  t.match(JSON.parse(failed.stdout), {
    id: '13',
    status: 'failed',
    polls: 2,
    messages: ['the archive is not gzip data (a snapshot is a gzip-compressed tar archive)', 'second message'],
  });
  const stillProcessing = await cli(t, system.env, ['wait', '99', '--json', '--max-polls', '2']);
  t.equal(stillProcessing.code, 3);
  t.same(JSON.parse(stillProcessing.stdout), { id: '99', status: 'processing', polls: 2 });

  const hitsJson = await cli(t, system.env, ['hits', '41', '--json']);
  t.equal(hitsJson.code, 0, hitsJson.stderr);
  const hits = JSON.parse(hitsJson.stdout);
  t.match(hits, { id: '41', diagnostics: { filter: 'hit', hit_count: 5, miss_count: 1 }, version: '2026.11.1' });
  t.same(
    hits.diagnostics.diagnostic.map((d: { name: string }) => d.name),
    ['log-rotation-off', 'disk-nearly-full', 'weak-ciphers', 'admin-default-password', 'core-files-present'],
  );
  t.match(hits.system_information, { hostname: 'device-1.example.net' });

  t.same(JSON.parse((await cli(t, system.env, ['list', '--json'])).stdout), { ids: ['0', '41', '42'] });
  t.same(JSON.parse((await cli(t, system.env, ['delete', '41', '--json'])).stdout), { deleted: ['41'] });
  t.same(JSON.parse((await cli(t, system.env, ['delete-all', '--json'])).stdout), { deleted: ['41', '42'] });

  const out = join(t.testdir(), 'r.csv');
  const reported = await cli(t, system.env, ['report', '41', '--format', 'csv', '--out', out, '--json']);
  t.equal(reported.code, 0, reported.stderr);
  t.same(JSON.parse(reported.stdout), { id: '41', format: 'csv', contentType: 'text/csv', bytes: CSV.length, file: out });
});

t.test('report without --out writes the report to stdout, byte for byte the --out file', async (t) => {
  const system = await fakeSystem(t);
  for (const format of ['pdf', 'csv']) {
    const file = join(t.testdir(), `r.${format}`);
    const toFile = await cli(t, system.env, ['report', '41', '--format', format, '--out', file]);
    t.equal(toFile.code, 0, toFile.stderr);
    const piped = await cli(t, system.env, ['report', '41', '--format', format]);
    t.equal(piped.code, 0, piped.stderr);
    t.equal(piped.stderr, '', 'no message beside the report');
    t.ok(piped.stdoutBytes.equals(readFileSync(file)), `${format}: stdout is the file's bytes`);
    t.ok(piped.stdoutBytes.equals(format === 'pdf' ? PDF : CSV), `${format}: the bytes the role sent`);
  }
});

t.test('a PDF is not written to a terminal: one line saying how, exit 2, nothing asked; a CSV is', async (t) => {
  const system = await fakeSystem(t);
  const stdout = terminal();
  const stderr = new PassThrough();
  let message = '';
  stderr.on('data', (chunk: Buffer) => (message += chunk));
  t.equal(await runSnapshotCommand(['report', '41', '--format', 'pdf'], { env: system.env, stdout: stdout.stream, stderr }), 2);
  t.equal(message, 'portolan snapshot report: a PDF is not written to a terminal: add --out 41.pdf, or redirect stdout (> 41.pdf)\n');
  t.equal(stdout.drawn(), '');
  t.equal(system.login.seen.length, 0, 'no login');

  const csv = terminal();
  t.equal(await runSnapshotCommand(['report', '41', '--format', 'csv'], { env: system.env, stdout: csv.stream, stderr }), 0);
  t.equal(csv.drawn(), CSV.toString('utf8'));
});

t.test('on a terminal a wait shows a bar of its polls on stderr instead of a line per poll', async (t) => {
  const system = await fakeSystem(t);
  const stderr = terminal();
  const stdout = new PassThrough();
  let printed = '';
  stdout.on('data', (chunk: Buffer) => (printed += chunk));
  const code = await runSnapshotCommand(['wait', '41'], { env: system.env, stdout, stderr: stderr.stream, sleep: async () => {} });
  t.equal(code, 0);
  t.match(stderr.drawn(), /waiting for snapshot 41 \[[^\]]+\] poll 2 of at most 150: PROCESSING/);
  t.notMatch(stderr.drawn(), /\(poll 1 of at most 150\)/, 'no per-poll lines');
  t.match(stderr.drawn(), 'snapshot 41 is ready: device-1.example.net, chassis PTL-0001-4242');
  t.equal(printed, '', 'nothing on stdout without --json');
});

t.test('the roles are found from the settings of portolan start: the offset, the address, the config file', async (t) => {
  const system = await fakeSystem(t, { neighbours: true });
  const offset = Number(new URL(system.diagnostics.url).port) - 8300;
  const run = await cli(t, { ...system.credentials, PORTOLAN_PORT_OFFSET: String(offset), PORTOLAN_HOST: '0.0.0.0' }, ['list']);
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout, '0\n41\n42\n');
  t.equal(system.login.seen.length, 1, 'logged in at 8301 + the offset');

  const config = join(t.testdir(), 'portolan.json');
  writeFileSync(config, JSON.stringify({ portOffset: offset, logLevel: 'warn' }));
  const fromFile = await cli(t, { ...system.credentials, PORTOLAN_CONFIG: config }, ['list', '--json']);
  t.equal(fromFile.code, 0, fromFile.stderr);
  t.same(JSON.parse(fromFile.stdout), { ids: ['0', '41', '42'] });

  const overridden = await cli(
    t,
    { ...system.credentials, PORTOLAN_PORT_OFFSET: String(offset - 1), PORTOLAN_LOGIN_URL: system.login.url },
    ['list'],
  );
  t.equal(overridden.code, 1, 'the login URL is set; the diagnostics role is looked for at 8300 + the other offset');
  t.equal(
    overridden.stderr,
    `cannot reach http://127.0.0.1:${8300 + offset - 1} (ECONNREFUSED): is the diagnostics role running? (URL from PORTOLAN_HOST, PORTOLAN_PORT_OFFSET and PORTOLAN_DIAGNOSTICS_PORT, as portolan start reads them; or give --target <url>)\n`,
  );
});

t.test('settings that place no role are one line each, exit 2, before any request', async (t) => {
  const system = await fakeSystem(t);
  const far = await cli(t, { ...system.credentials, PORTOLAN_PORT_OFFSET: '60000' }, ['list']);
  t.equal(far.code, 2);
  t.equal(
    far.stderr,
    "PORTOLAN_PORT_OFFSET 60000 puts the gateway role on port 68080, outside 1..65535: choose an offset that keeps every role's port in range, or set PORTOLAN_GATEWAY_PORT (the settings of portolan start, read to find the roles)\n",
  );
  const free = await cli(t, { ...system.credentials, PORTOLAN_DIAGNOSTICS_PORT: '0' }, ['list']);
  t.equal(free.code, 2);
  t.equal(
    free.stderr,
    'PORTOLAN_DIAGNOSTICS_PORT is 0 (a free port, known only once started): give --target <the URL of any role> or set PORTOLAN_DIAGNOSTICS_URL\n',
  );
  t.equal(system.login.seen.length + system.diagnostics.seen.length, 0);
});

t.test('--target: any role of a running system; its role map names the diagnostics and login roles', async (t) => {
  const system = await fakeSystem(t);
  const roleMap = {
    service: 'portolan',
    version: '0.1.0',
    kind: 'reference',
    registrationHost: null,
    roles: [
      { role: 'gateway', url: 'http://127.0.0.1:1', docs: null, interfaces: ['rate-limit'] },
      { role: 'diagnostics', url: system.diagnostics.url, docs: null, interfaces: ['snapshots', 'health'] },
      { role: 'login', url: system.login.url, docs: null, interfaces: ['snapshots', 'health'] },
    ],
  };
  const gateway = await listen(t, ({ url }, res) =>
    url === '/.well-known/portolan' ? send(res, 200, roleMap) : send(res, 404, { message: 'no such route' }),
  );
  const after = await cli(t, system.credentials, ['list', '--target', gateway.url]);
  t.equal(after.code, 0, after.stderr);
  t.equal(after.stdout, '0\n41\n42\n');
  const before = await cli(t, system.credentials, ['--target', `${gateway.url}/docs`, 'hits', '41', '--json']);
  t.equal(before.code, 0, before.stderr);
  t.equal(JSON.parse(before.stdout).id, '41');
  t.same(
    gateway.seen.map((r) => `${r.method} ${r.url}`),
    ['GET /.well-known/portolan', 'GET /.well-known/portolan'],
  );

  const [closed] = await findFreePorts(1);
  const override = await cli(t, { ...system.credentials, PORTOLAN_DIAGNOSTICS_URL: `http://127.0.0.1:${closed}` }, [
    'list',
    '--target',
    gateway.url,
  ]);
  t.equal(override.code, 1);
  t.equal(
    override.stderr,
    `cannot reach http://127.0.0.1:${closed} (ECONNREFUSED): is the diagnostics role running? (PORTOLAN_DIAGNOSTICS_URL)\n`,
    'an explicit URL overrides what the role map says',
  );

  const noMap = await cli(t, system.credentials, ['list', '--target', system.diagnostics.url]);
  t.equal(noMap.code, 1);
  t.equal(
    noMap.stderr,
    `--target: ${system.diagnostics.url} gives no Portolan role map (GET /.well-known/portolan answered 403): is it a role of Portolan (portolan start or portolan mock)?\n`,
  );
  const nobody = await cli(t, system.credentials, ['list', '--target', `http://127.0.0.1:${closed}`]);
  t.equal(nobody.code, 1);
  t.equal(nobody.stderr, `--target: cannot reach http://127.0.0.1:${closed} (ECONNREFUSED): is a Portolan role listening there?\n`);

  const partial = await listen(t, (_seen, res) => send(res, 200, { ...roleMap, roles: roleMap.roles.slice(0, 2) }));
  const noLogin = await cli(t, system.credentials, ['list', '--target', partial.url]);
  t.equal(noLogin.code, 1);
  t.equal(
    noLogin.stderr,
    `the role map of ${partial.url} lists no login role: give the URL of a system that runs it, or set PORTOLAN_LOGIN_URL\n`,
  );
});

t.test('`portolan snapshot` runs through the project command line', async (t) => {
  const system = await fakeSystem(t);
  const child = spawn(process.execPath, [main, 'snapshot', 'list'], {
    env: { ...process.env, ...system.env, PORTOLAN_LOG_LEVEL: 'silent' },
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk));
  const [code] = await once(child, 'exit');
  t.equal(code, 0);
  t.equal(out, '0\n41\n42\n');
});
