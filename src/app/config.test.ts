import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import { ConfigError } from '../lib/config.ts';
import { loadConfig, SETTINGS } from './config.ts';

t.test('defaults give every role its default port and the embedded store', async (t) => {
  const config = loadConfig({});
  t.same(config.ports, { gateway: 8080, mapping: 8081, device: 8100, central: 8200, diagnostics: 8300, login: 8301 });
  t.equal(config.host, '127.0.0.1');
  t.equal(config.database, 'sqlite:./data/portolan.db');
  t.equal(config.healthCheckTimeoutMs, 2000);
  t.equal(config.portOffset, 0);
  t.ok(Object.isFrozen(config) && Object.isFrozen(config.ports), 'the config is frozen');
});

t.test('environment variables are decoded to their types', async (t) => {
  const config = loadConfig({
    PORTOLAN_MAPPING_PORT: '9000',
    PORTOLAN_VALIDATE_RESPONSES: 'true',
    PORTOLAN_DATABASE: 'postgres://u@db:5432/x',
  });
  t.equal(config.ports.mapping, 9000);
  t.equal(config.validateResponses, true);
  t.equal(config.database, 'postgres://u@db:5432/x');
});

t.test('a JSON file sets values and the environment overrides it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-config-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ ports: { mapping: 9100, device: 9200 }, logLevel: 'warn' }));
  const config = loadConfig({ PORTOLAN_CONFIG: file, PORTOLAN_DEVICE_PORT: '9300' });
  t.equal(config.ports.mapping, 9100, 'from the file');
  t.equal(config.ports.device, 9300, 'the environment wins');
  t.equal(config.logLevel, 'warn');
});

t.test('every wrong setting is reported in one error, one line each', async (t) => {
  const error = t.throws(() =>
    loadConfig({ PORTOLAN_MAPPING_PORT: 'eighty', PORTOLAN_BODY_LIMIT: '0', PORTOLAN_LOG_LEVEL: 'loud', PORTOLAN_DATABASE: 'mysql://x' }),
  ) as ConfigError;
  t.type(error, ConfigError);
  t.equal(error.problems.length, 4);
  t.match(error.message, /PORTOLAN_MAPPING_PORT must be integer, got 'eighty'/);
  t.match(error.message, /PORTOLAN_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got 'loud'/);
  t.match(error.message, /PORTOLAN_DATABASE must match pattern/);
});

t.test("a URL's password in a wrong setting is never shown", async (t) => {
  const error = t.throws(() => loadConfig({ PORTOLAN_DATABASE: 'mysql://root:hunter2@db/x' })) as ConfigError;
  t.notMatch(error.message, /hunter2/);
  t.match(error.message, /PORTOLAN_DATABASE must match pattern .*, got 'mysql:\/\/\*\*\*@db\/x'/);
});

t.test('a bad file is named: unreadable, not JSON, unknown keys, wrong values', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-config-'));
  t.throws(() => loadConfig({ PORTOLAN_CONFIG: join(dir, 'missing.json') }), /cannot read .*missing.json \(ENOENT\)/);
  writeFileSync(join(dir, 'bad.json'), '{ nope');
  t.throws(() => loadConfig({ PORTOLAN_CONFIG: join(dir, 'bad.json') }), /is not a JSON object/);
  writeFileSync(join(dir, 'wrong.json'), JSON.stringify({ prots: {}, ports: { gateway: 70000 } }));
  const error = t.throws(() => loadConfig({ PORTOLAN_CONFIG: join(dir, 'wrong.json') })) as ConfigError;
  t.match(error.problems, [/unknown setting 'prots'/, /ports.gateway in the PORTOLAN_CONFIG file must be <= 65535/]);
});

t.test('every setting has an environment variable, a default and a description', async (t) => {
  for (const s of SETTINGS) t.ok(s.env.startsWith('PORTOLAN_') && s.default !== undefined && s.description.length > 10, s.key);
});

t.test('every default passes its own schema (defaults are not checked at start)', async (t) => {
  const ajv = new Ajv.default({ coerceTypes: true, allErrors: true });
  for (const s of SETTINGS) {
    const holder = { value: s.encode ? s.encode(s.default) : s.default };
    t.ok(ajv.validate({ type: 'object', properties: { value: s.schema } }, holder), `${s.key}: ${JSON.stringify(s.default)}`);
  }
});

t.test('overrides (tests, embedding) go through the same decoder as every other source', async (t) => {
  const config = loadConfig(
    { PORTOLAN_MAPPING_PORT: '9000' },
    { ports: { mapping: 9001 } as never, roles: ['mapping', 'gateway'], poolMembers: [{ host: 'a', port: 1 }] },
  );
  t.equal(config.ports.mapping, 9001, 'an override wins over the environment');
  t.equal(config.ports.device, 8100, 'other nested settings keep their defaults');
  t.same(config.roles, ['mapping', 'gateway']);
  t.same(config.poolMembers, [{ host: 'a', port: 1 }]);
  const error = t.throws(() => loadConfig({}, { bodyLimitBytes: -5, roles: ['ship'] as never, logLevel: 'loud' as never })) as ConfigError;
  t.match(error.problems, [
    /override bodyLimitBytes must be >= 1/,
    /override logLevel must be one of/,
    /override roles must match pattern/,
  ]);
  t.throws(() => loadConfig({}, { nonsense: 1 } as never), /override: unknown setting 'nonsense'/);
});

t.test("an interface's settings are declared beside it and join the configuration through its module", async (t) => {
  const { clientRegistrationModule } = await import('../interfaces/client-registration/module.ts');
  const { REGISTRATION_SETTINGS } = await import('../interfaces/client-registration/settings.ts');
  t.equal(clientRegistrationModule.settings, REGISTRATION_SETTINGS);
  for (const setting of REGISTRATION_SETTINGS) t.ok(SETTINGS.includes(setting), `${setting.env} is a setting of the system`);
  t.equal(
    loadConfig({ PORTOLAN_REGISTRATION_PATH: '/register' }).registrationPath,
    '/register',
    'decoded from the environment like any other',
  );
});

t.test('a registration path every role answers itself (/docs, /openapi, /metrics) is refused with a plain reason', async (t) => {
  for (const path of ['/docs', '/docs/register', '/openapi/x', '/metrics']) {
    let problems: readonly string[] = [];
    try {
      loadConfig({ PORTOLAN_REGISTRATION_PATH: path });
    } catch (error) {
      problems = (error as ConfigError).problems;
    }
    t.same(
      problems,
      [
        `PORTOLAN_REGISTRATION_PATH must be a path (starting with /, no query or spaces) not under /docs, /openapi or /metrics, got '${path}'`,
      ],
      path,
    );
  }
  for (const path of ['/docsx', '/api/docs', '/register'])
    t.equal(loadConfig({ PORTOLAN_REGISTRATION_PATH: path }).registrationPath, path, `${path} is fine`);
});

t.test('the registration host follows the gateway port unless it is set', async (t) => {
  t.equal(loadConfig({ PORTOLAN_GATEWAY_PORT: '9443' }).registrationHost, 'localhost:9443');
  t.equal(
    loadConfig({ PORTOLAN_GATEWAY_PORT: '9443', PORTOLAN_REGISTRATION_HOST: 'register.example.com' }).registrationHost,
    'register.example.com',
    'a set value wins',
  );
  t.equal(loadConfig({}).registrationHost, 'localhost:8080', 'the default gateway port');
});

t.test("PORTOLAN_PORT_OFFSET moves every role's default port; a role's own port setting wins over it", async (t) => {
  const config = loadConfig({ PORTOLAN_PORT_OFFSET: '10000', PORTOLAN_LOGIN_PORT: '9301' });
  t.same(config.ports, { gateway: 18080, mapping: 18081, device: 18100, central: 18200, diagnostics: 18300, login: 9301 });
  t.equal(config.portOffset, 10000);
  t.equal(config.registrationHost, 'localhost:18080', 'the registration host follows the moved gateway');
  t.same(loadConfig({ PORTOLAN_PORT_OFFSET: '-1000' }).ports.central, 7200, 'a negative offset');
  t.same(loadConfig({ PORTOLAN_PORT_OFFSET: '5', PORTOLAN_MAPPING_PORT: '0' }).ports.mapping, 0, 'a role set to 0 still picks a free port');
});

t.test('the offset is the file key portOffset; the environment wins over the file, a port in the file over the offset', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-config-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ portOffset: 200, ports: { device: 9100 } }));
  t.same(loadConfig({ PORTOLAN_CONFIG: file }).ports, {
    gateway: 8280,
    mapping: 8281,
    device: 9100,
    central: 8400,
    diagnostics: 8500,
    login: 8501,
  });
  t.equal(loadConfig({ PORTOLAN_CONFIG: file, PORTOLAN_PORT_OFFSET: '1' }).ports.gateway, 8081);
});

t.test('an offset that moves a role out of 1..65535 is one line naming the offset and the role', async (t) => {
  const error = t.throws(() => loadConfig({ PORTOLAN_PORT_OFFSET: '57300' })) as ConfigError;
  t.same(error.problems, [
    "PORTOLAN_PORT_OFFSET 57300 puts the diagnostics role on port 65600, outside 1..65535: choose an offset that keeps every role's port in range, or set PORTOLAN_DIAGNOSTICS_PORT",
  ]);
  t.throws(() => loadConfig({ PORTOLAN_PORT_OFFSET: '1.5' }), /PORTOLAN_PORT_OFFSET must be integer, got '1.5'/);
  t.equal(loadConfig({ PORTOLAN_PORT_OFFSET: '57000' }).ports.login, 65301, 'the last port in range is fine');
});
