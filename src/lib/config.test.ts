import t from 'tap';
import { ConfigError, loadConfig } from './config.ts';

t.test('defaults give every role its DESIGN.md port', async (t) => {
  const config = loadConfig({});
  t.same(config.ports, { gateway: 8080, mapping: 8081, device: 8100, central: 8200, diagnostics: 8300, login: 8301 });
  t.equal(config.host, '127.0.0.1');
  t.ok(Object.isFrozen(config) && Object.isFrozen(config.ports), 'the config is frozen');
});

t.test('every wrong setting is reported in one error', async (t) => {
  const error = t.throws(() => loadConfig({ PORTOLAN_MAPPING_PORT: 'eighty', PORTOLAN_BODY_LIMIT: '0', PORTOLAN_LOG_LEVEL: 'loud' })) as ConfigError;
  t.type(error, ConfigError);
  t.equal(error.problems.length, 3);
  t.match(error.message, /PORTOLAN_MAPPING_PORT must be a whole number/);
  t.match(error.message, /PORTOLAN_LOG_LEVEL must be one of/);
});
