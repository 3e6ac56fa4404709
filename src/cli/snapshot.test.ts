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

async function listen(t: TapTest, handle: (seen: Seen, res: ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
    seen.push(request);
    handle(request, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen };
}

/** The login role (form login, 302 with the session cookies) and the diagnostics role. */
async function fakeSystem(t: TapTest, options: { loginStatus?: number; withoutSuccessCookie?: boolean } = {}) {
  const polls = new Map<string, number>();
  const diagnostics = await listen(t, ({ method, url, headers }, res) => {
    const path = new URL(url, 'http://x').pathname;
    if (!headers.cookie?.includes(SESSION))
      return send(res, 403, { code: 403, message: 'A session is required: log in at the login server and send its cookies.' });
    const one = /^\/snapshot-analyzer\/api\/snapshots\/([^/]+)(\/diagnostics)?$/.exec(path);
    if (path === '/snapshot-analyzer/api/snapshots') {
      if (method === 'GET') return send(res, 200, { id: ['0', '41', '42'] });
      if (method === 'POST') return send(res, 302, undefined, { location: `${diagnostics.url}/snapshot-analyzer/api/snapshots/41` });
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
  });
  const login = await listen(t, ({ method, url, body }, res) => {
    if (method !== 'POST' || url !== '/resource/loginAction.jsp') return send(res, 404, { code: 404, message: 'no such route' });
    if (options.loginStatus) return send(res, options.loginStatus, { code: options.loginStatus, message: 'Not implemented yet.' });
    const form = new URLSearchParams(body.toString());
    const known =
      (form.get('userid') === USER && form.get('passwd') === PASSWORD) ||
      (form.get('userid') === 'admin' && form.get('passwd') === ADMIN_PASSWORD);
    if (!known) return send(res, 401, { code: 401, message: 'Invalid user id or password.' });
    const cookies = [`${SESSION}; Path=/; HttpOnly; SameSite=Lax`, ...(options.withoutSuccessCookie ? [] : ['sso_completed=1; Path=/'])];
    send(res, 302, undefined, { 'set-cookie': cookies, location: `${diagnostics.url}/snapshot-analyzer/api/snapshots` });
  });
  const env = {
    PORTOLAN_DIAGNOSTICS_URL: diagnostics.url,
    PORTOLAN_LOGIN_URL: login.url,
    PORTOLAN_DIAGNOSTICS_USER: USER,
    PORTOLAN_DIAGNOSTICS_PASSWORD: PASSWORD,
  };
  return { diagnostics, login, env };
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

t.test('upload logs in, streams the file as the multipart field snapshot with the session cookies and prints the id', async (t) => {
  const system = await fakeSystem(t);
  const file = join(t.testdir(), 'device-1 snapshot.tgz');
  const bytes = randomBytes(3 * 1024 * 1024 + 17);
  writeFileSync(file, bytes);

  const run = await cli(t, system.env, ['upload', file]);
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout, `snapshot 41 uploaded: ${system.diagnostics.url}/snapshot-analyzer/api/snapshots/41\n`);
  t.equal(run.stderr, '', 'quiet when stderr is not a terminal');

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
  t.same(lines(run.stdout), [
    `snapshot 41 uploaded: ${system.diagnostics.url}/snapshot-analyzer/api/snapshots/41`,
    'snapshot 41: description set',
    'snapshot 41 is ready: device-1.example.net, chassis PTL-0001-4242',
  ]);
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
  t.equal(
    run.stderr,
    'snapshot 13 failed (422, processing_status ERROR): the archive is not gzip data (a snapshot is a gzip-compressed tar archive); second message\n',
  );
  t.same(run.sleeps, [2000]);
});

t.test('wait exits 3 when polling is exhausted, with the injected interval', async (t) => {
  const system = await fakeSystem(t);
  const run = await cli(t, system.env, ['wait', '99', '--max-polls', '3']);
  t.equal(run.code, 3);
  t.equal(run.stderr, 'snapshot 99 still processing after 3 polls\n');
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
  t.equal(pdf.stdout, `wrote ${PDF.length} bytes (application/pdf) to ${join(dir, 'r.pdf')}\n`);
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
  t.equal(notYet.stderr, `login failed: ${unwired.login.url} answered 501: Not implemented yet.; is PORTOLAN_LOGIN_URL the login role?\n`);
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

t.test('usage errors exit 2; --help on each subcommand exits 0', async (t) => {
  const system = await fakeSystem(t);
  for (const args of [
    ['wait', 'no/such'],
    ['wait', '41', '--interval', '0'],
    ['wait', '41', '--max-polls', '1.5'],
    ['hits', '41', '--set', 'some'],
    ['report', '41', '--out', 'x.pdf'],
    ['upload'],
    ['frobnicate'],
    [],
  ]) {
    const run = await cli(t, system.env, args);
    t.equal(run.code, 2, `${args.join(' ')}: usage error`);
  }
  const missing = await cli(t, system.env, ['upload', join(t.testdir(), 'absent.tgz')]);
  t.equal(missing.code, 2);
  t.equal(missing.stderr, `cannot read ${join(t.testdir(), 'absent.tgz')} (ENOENT)\n`);
  for (const command of ['upload', 'wait', 'hits', 'report', 'list', 'delete', 'delete-all']) {
    const help = await cli(t, {}, [command, '--help']);
    t.equal(help.code, 0);
    t.match(help.stdout, `Usage: portolan snapshot ${command}`);
    t.match(help.stdout, 'PORTOLAN_DIAGNOSTICS_PASSWORD');
  }
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
  t.equal(printed, `snapshot 41 uploaded: ${system.diagnostics.url}/snapshot-analyzer/api/snapshots/41\n`);
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
