import t from 'tap';
import { Readable } from 'node:stream';
import { request as send } from 'undici';
import { fileURLToPath } from 'node:url';
import { startTestSystem, tempSqliteUrl } from './test-system.ts';
import { migrationsOf, MODULES } from './modules.ts';
import { openDatabase } from '../stores/open-database.ts';
import { createAccountStore } from '../accounts/account-store.ts';
import { ADMIN_PROFILE } from '../accounts/admin-bootstrap.ts';
import { systemClock } from '../lib/clock.ts';
import { SETTINGS } from './config.ts';
import { tidesModule } from './fixtures/ninth-interface/module.ts';

t.test('the operations without a handler are exactly the ones each module lists in its notImplemented', async (t) => {
  const listed = Object.fromEntries(MODULES.filter((m) => (m.notImplemented ?? []).length > 0).map((m) => [m.name, m.notImplemented]));
  const { system } = await startTestSystem(t);
  t.same(system.notImplemented, listed);
});

t.test('a module whose handlers leave an operation out, unlisted, does not start (and names it)', async (t) => {
  const unlisted = { ...tidesModule, notImplemented: [] };
  await t.rejects(
    startTestSystem(t, { modules: [...MODULES, unlisted] }),
    /interface tides: operation recordTide has no handler and is not listed/,
  );
  const listedButServed = { ...tidesModule, notImplemented: ['recordTide', 'getTide'] };
  await t.rejects(startTestSystem(t, { modules: [...MODULES, listedButServed] }), /operation getTide has a handler but is listed/);
  const stray = {
    ...tidesModule,
    create: (context: Parameters<typeof tidesModule.create>[0]) => ({ ...tidesModule.create(context), getTides: () => ({ status: 200 }) }),
  };
  await t.rejects(startTestSystem(t, { modules: [...MODULES, stray] }), /handlers for operations its spec does not have: getTides/);
});

t.test('every setting a module reads from another is declared by some module or the core', async (t) => {
  const declared = new Set(SETTINGS.map((s) => s.key));
  for (const module of MODULES)
    for (const setting of module.reads ?? []) t.ok(declared.has(setting.key), `${module.name} reads ${setting.key}, which is declared`);
});

t.test('a ninth interface joins by its folder and one line in the module list', async (t) => {
  const { system } = await startTestSystem(t, { modules: [...MODULES, tidesModule] });
  const mapping = system.url('mapping');
  const tide = await send(`${mapping}/tides/stjohns`, { headers: { 'x-harbour-key': 'lighthouse' } });
  t.equal(tide.statusCode, 200, 'routed on the role its spec names, its handler answers');
  t.same(
    await tide.body.json(),
    { port: 'stjohns', highWater: '06:12', keeper: 'keeper' },
    'its migration ran; its authenticator named the principal',
  );
  const refused = await send(`${mapping}/tides/stjohns`);
  t.equal(refused.statusCode, 401);
  t.same(await refused.body.json(), { problem: 'The harbour key is missing or wrong.' }, 'its own security scheme, in its own error shape');
  const invalid = await send(`${mapping}/tides/St.Johns`, { headers: { 'x-harbour-key': 'lighthouse' } });
  t.equal(invalid.statusCode, 400);
  t.match(await invalid.body.json(), { problem: /path\.port must match pattern/ }, 'validated against its spec');
  const missing = await send(`${mapping}/tides`, {
    method: 'POST',
    headers: { 'x-harbour-key': 'lighthouse', 'content-type': 'application/json' },
    body: '{"port":"x"}',
  });
  t.equal(missing.statusCode, 501);
  t.same(await missing.body.json(), { problem: 'recordTide is not implemented yet.' });
  t.same(system.notImplemented.tides, ['recordTide']);
  const vessels = await send(`${mapping}/api/vessels`);
  t.equal(vessels.statusCode, 200, "the role's other interfaces are unchanged");
  await vessels.body.dump();
});

t.test('a multipart upload reaches its handler as a stream, never buffered, past the buffered-body limit', async (t) => {
  const { system } = await startTestSystem(t, { modules: [...MODULES, tidesModule], config: { bodyLimitBytes: 65_536 } });
  const size = 8 * 1024 * 1024;
  const boundary = 'portolan-boundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="logbook"; filename="log.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* parts() {
    yield head;
    for (let sent = 0; sent < size; sent += 65_536) yield Buffer.alloc(65_536, 'n');
    yield tail;
  }
  const response = await send(`${system.url('mapping')}/tides/logbook`, {
    method: 'POST',
    headers: { 'x-harbour-key': 'lighthouse', 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: Readable.from(parts()),
  });
  t.equal(response.statusCode, 200);
  t.same(
    await response.body.json(),
    { bytes: head.length + size + tail.length, buffered: false },
    '8 MiB read by the handler from the stream; the 64 KiB buffered limit did not apply',
  );
  const declared = await send(`${system.url('mapping')}/tides/logbook`, {
    method: 'POST',
    headers: {
      'x-harbour-key': 'lighthouse',
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + size + tail.length),
    },
    body: Readable.from(parts()),
  });
  t.equal(declared.statusCode, 200, 'with a Content-Length too: the buffered limit does not apply to a streamed operation');
  await declared.body.dump();
  async function* tooMuch() {
    yield head;
    for (let sent = 0; sent < 16 * 1024 * 1024; sent += 65_536) yield Buffer.alloc(65_536, 'n');
    yield tail;
  }
  const over = await send(`${system.url('mapping')}/tides/logbook`, {
    method: 'POST',
    headers: { 'x-harbour-key': 'lighthouse', 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: Readable.from(tooMuch()),
  });
  t.equal(over.statusCode, 413, "past the operation's own limit (12 MiB), counted as it streams: 413");
  t.same(await over.body.json(), { problem: 'The request body exceeds the limit of 12582912 bytes.' });
  const refused = await send(`${system.url('mapping')}/tides/logbook`, {
    method: 'POST',
    headers: { 'content-type': 'multipart/form-data; boundary=x' },
    body: Readable.from(parts()),
  });
  t.equal(refused.statusCode, 401, 'security still comes first');
  await refused.body.dump();
});

t.test('a module whose spec uses a scheme it has no authenticator for is refused at start', async (t) => {
  const { authenticators: _dropped, ...withoutSecurity } = tidesModule;
  await t.rejects(
    startTestSystem(t, { modules: [...MODULES, withoutSecurity] }),
    /interface tides has no authenticator for security scheme harbourKey/,
  );
});

t.test('a contract that does not load stops the start before an administrative password is generated', async (t) => {
  const unreadable = { ...tidesModule, specFile: fileURLToPath(new URL('./fixtures/ninth-interface/no-such-spec.yaml', import.meta.url)) };
  const store = tempSqliteUrl(t);
  const announced: string[] = [];
  await t.rejects(
    startTestSystem(t, {
      modules: [...MODULES, unreadable],
      config: { database: store.url, adminPassword: '' },
      announce: (m) => announced.push(m),
    }),
    { code: 'ENOENT' },
  );
  t.same(announced, [], 'no password was generated (nobody would have kept it)');
  const database = await openDatabase(store.url, { migrations: migrationsOf([...MODULES, unreadable]) });
  t.teardown(() => database.close());
  t.notOk(
    await createAccountStore(database, { clock: systemClock }).has(ADMIN_PROFILE, 'admin'),
    'the store holds no administrative account',
  );
});

t.test('a configured administrative password is in the store once the start is done', async (t) => {
  const { system } = await startTestSystem(t, { config: { adminPassword: 'c0rrect horse' } });
  t.equal(await system.accounts.verify(ADMIN_PROFILE, 'admin', 'c0rrect horse'), 'allow');
});
