// More than one worker needs every store shared: each setting that keeps state in one process's memory
// refuses the start in one line naming it.
import t from 'tap';
import { loadConfig } from './config.ts';
import { sharedDefaults, workersProblem } from './cluster.ts';

const shared = { PORTOLAN_WORKERS: '2', PORTOLAN_RATE_LIMIT_STORE: 'sqlite:./data/rate-limit.db' };

t.test('one worker runs with any store', async (t) => {
  t.equal(workersProblem(loadConfig({ PORTOLAN_DATABASE: 'sqlite::memory:' })), undefined, 'the default, 1 worker');
  t.equal(loadConfig({}).workers, 1);
});

t.test('the rate-limit counters in memory are refused, naming the setting and what to set', async (t) => {
  const line = workersProblem(loadConfig({ PORTOLAN_WORKERS: '2' }));
  t.match(
    line,
    /^With 2 workers .* PORTOLAN_RATE_LIMIT_STORE is memory .* set it to sqlite:\S+ \(this machine\) or redis:\/\/\S+, or run 1 worker\.$/,
  );
  t.notMatch(line, /\n/, 'one line');
  t.equal(workersProblem(loadConfig(shared)), undefined, 'a SQLite file of counters is shared');
  t.equal(workersProblem(loadConfig({ ...shared, PORTOLAN_RATE_LIMIT_STORE: 'redis://127.0.0.1:6379' })), undefined, 'and Redis');
  t.equal(
    workersProblem(loadConfig({ PORTOLAN_WORKERS: '2', PORTOLAN_RATE_LIMIT_ENABLED: 'false' })),
    undefined,
    'no counters when rate limiting is off',
  );
  t.equal(workersProblem(loadConfig({ PORTOLAN_WORKERS: '2', PORTOLAN_ROLES: 'mapping,central' })), undefined, 'nor without the gateway');
});

t.test('a database in memory is refused', async (t) => {
  t.match(workersProblem(loadConfig({ ...shared, PORTOLAN_DATABASE: 'sqlite::memory:' })), /PORTOLAN_DATABASE is sqlite::memory:/);
  t.equal(workersProblem(loadConfig({ ...shared, PORTOLAN_DATABASE: 'postgres://portolan@db:5432/portolan' })), undefined);
});

t.test('the device role alone cannot be served by several workers (its data plane runs in one)', async (t) => {
  t.match(workersProblem(loadConfig({ ...shared, PORTOLAN_ROLES: 'device' })), /the device role runs in one worker only/);
  t.equal(workersProblem(loadConfig({ ...shared, PORTOLAN_ROLES: 'device,central' })), undefined);
});

t.test('PORTOLAN_WORKERS: 1 to 256, or auto (one per core)', async (t) => {
  t.equal(loadConfig({ PORTOLAN_WORKERS: '256' }).workers, 256);
  t.ok(loadConfig({ PORTOLAN_WORKERS: 'auto' }).workers >= 1);
  for (const wrong of ['0', '257', '-1', '1.5', 'all'])
    t.throws(() => loadConfig({ PORTOLAN_WORKERS: wrong }), /PORTOLAN_WORKERS must be a whole number from 1 to 256, or auto/, wrong);
});

t.test('more than one worker with no rate-limit store named: a SQLite file beside the database, or under ./data', async (t) => {
  t.same(sharedDefaults({}, 1, 'sqlite:/srv/p/portolan.db'), {}, 'one worker: memory stays the default');
  t.same(sharedDefaults({}, 2, 'sqlite:/srv/p/portolan.db'), { PORTOLAN_RATE_LIMIT_STORE: 'sqlite:/srv/p/rate-limit.db' });
  t.same(sharedDefaults({}, 2, 'postgres://db.example/portolan'), { PORTOLAN_RATE_LIMIT_STORE: 'sqlite:data/rate-limit.db' });
  t.same(sharedDefaults({ PORTOLAN_RATE_LIMIT_STORE: 'memory' }, 2, 'sqlite:/srv/p/portolan.db'), {}, 'a store named is kept');
});
