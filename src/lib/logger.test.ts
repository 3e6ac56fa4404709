// The process logger writes JSON lines to stdout asynchronously; nothing logged before an exit is lost.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const fixture = fileURLToPath(new URL('./fixtures/log-then-exit.ts', import.meta.url));

t.test('every line logged before process.exit reaches stdout, in order, the error line last', async (t) => {
  const lines = 20_000;
  const child = spawnSync(process.execPath, [fixture], {
    env: { ...process.env, LINES: String(lines) },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  t.equal(child.status, 3, 'the exit code the process chose');
  const records = child.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { msg: string; requestId?: string; level: number });
  t.equal(records.length, lines + 1, 'every line written');
  t.same(
    records.slice(0, 3).map((record) => record.requestId),
    ['r0', 'r1', 'r2'],
    'in the order logged',
  );
  t.equal(records.at(-2)?.requestId, `r${lines - 1}`);
  t.match(records.at(-1), { msg: 'cannot go on', level: 50 }, 'the error line is last');
});

t.test("an access line is the very line pino writes for the same fields, escaped, at the logger's level", async (t) => {
  const { PassThrough } = await import('node:stream');
  const { createLogger, accessLogger } = await import('./logger.ts');
  const destination = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  destination.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  const log = createLogger({ level: 'info', format: 'json', destination }).child({ role: 'gateway' });
  const access = accessLogger(log);
  const fields = { requestId: 'abc-1', method: 'GET', operationId: 'proxy', status: 502, ms: 1.25 };
  const extra = { member: '127.0.0.1:8081', page: 'a "quoted"\nline', cut: 'client' };
  access.write('info', { ...fields, extra });
  log.info({ ...fields, ...extra }, 'request');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(lines.length, 2);
  const [composed, byPino] = lines.map(({ time, ...rest }) => ({ ...rest, time: typeof time }));
  t.same(composed, byPino, 'same fields and values as pino writes');
  t.same(Object.keys(composed!), Object.keys(byPino!), 'in the same order');
  t.equal(access.enabled('debug'), false, 'debug is below the level: the caller writes nothing');
  t.equal(accessLogger(createLogger({ level: 'debug', format: 'json', destination })).enabled('debug'), true);
});

t.test('pretty: one readable line per record, an access line as method, path, status, ms and request id', async (t) => {
  const { PassThrough } = await import('node:stream');
  const { createLogger, accessLogger } = await import('./logger.ts');
  const destination = new PassThrough();
  let text = '';
  destination.on('data', (chunk: Buffer) => (text += chunk));
  const log = createLogger({ level: 'info', format: 'pretty', isTerminal: false, destination }).child({ role: 'gateway' });
  const access = accessLogger(log);
  access.write('info', {
    requestId: 'abc-1',
    method: 'GET',
    path: '/api/charts/7?token=s3cret',
    operationId: 'getChart',
    status: 502,
    ms: 1.25,
    extra: { member: '127.0.0.1:8081', cut: 'client' },
  });
  access.write('info', { requestId: 'abc-2', method: 'POST', operationId: 'createChart', status: 201, ms: 3 });
  access.write('info', {
    requestId: 'abc-3',
    method: 'GET',
    path: '/a\u001b[31mred',
    operationId: undefined,
    status: 404,
    ms: 0.5,
    extra: { page: '/docs/\u009b31m' },
  });
  log.info({ pool: 'mapping', member: '127.0.0.1:8081', password: 'hunter2' }, 'pool member up');
  const lines = text.trimEnd().split('\n');
  t.equal(lines.length, 4, 'one line per record');
  const time = String.raw`^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: `;
  t.match(lines[0], new RegExp(`${time}gateway GET /api/charts/7 502 1\\.25 ms id=abc-1 member=127\\.0\\.0\\.1:8081 cut=client$`));
  t.match(lines[1], new RegExp(`${time}gateway POST \\(createChart\\) 201 3 ms id=abc-2$`), 'no path given: the operation');
  t.match(
    lines[2],
    new RegExp(`${time}gateway GET /a\\?\\[31mred 404 0\\.5 ms id=abc-3 page=/docs/\\?31m$`),
    'no control character reaches the terminal, extra fields included',
  );
  t.match(
    lines[3],
    new RegExp(`${time}pool member up \\{"role":"gateway","pool":"mapping","member":"127.0.0.1:8081","password":"\\[redacted\\]"\\}$`),
  );
  t.notMatch(text, /s3cret|hunter2/, 'no query string, no password');
});

t.test('JSON lines keep their shape: no path, even when the caller gives one', async (t) => {
  const { PassThrough } = await import('node:stream');
  const { createLogger, accessLogger } = await import('./logger.ts');
  const destination = new PassThrough();
  let text = '';
  destination.on('data', (chunk: Buffer) => (text += chunk));
  const log = createLogger({ level: 'info', format: 'auto', isTerminal: false, destination }).child({ role: 'mapping' });
  accessLogger(log).write('info', { requestId: 'r1', method: 'GET', path: '/api/x', operationId: 'getX', status: 200, ms: 1 });
  t.same(Object.keys(JSON.parse(text) as object), [
    'level',
    'time',
    'pid',
    'hostname',
    'name',
    'role',
    'requestId',
    'method',
    'operationId',
    'status',
    'ms',
    'msg',
  ]);
});
