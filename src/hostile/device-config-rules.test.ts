// Hostile cases of the device role (F): rules attached to a deployed service, written to hold the process
// (an endless loop on many connections at once), to eat its memory (a string doubled without end, a huge
// field), to split the message a member or a client gets (a line break in a field), or to overflow the
// stack of the checker (brackets nested thousands deep). Each is deployed through the device's REST and
// meets real traffic.
import t from 'tap';
import * as sdk from '../../generated/device-config/sdk.gen.ts';
import { startTestSystem } from '../app/test-system.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { captureLogs } from '../lib/test-logger.ts';
import { ADMIN_PASSWORD, declaration, deviceClient, freePort, startMember } from '../interfaces/device-config/test-device.ts';
import { through } from '../traffic/test-virtual-clients.ts';

const service = (port: number, iRules: string[]) => ({
  class: 'Service_HTTP',
  virtualAddresses: ['127.0.0.1'],
  virtualPort: port,
  pool: 'p',
  iRules,
});

/** A device with `config`, a member, and one service on a free port running `text`; its deployment's answer. */
async function deployRule(t: TapTest, text: string, config: Record<string, unknown> = {}) {
  const logs = captureLogs('info');
  const { system } = await startTestSystem(t, {
    config: { adminPassword: ADMIN_PASSWORD, ...config },
    fakeTimers: true,
    logger: logs.logger,
  });
  const client = deviceClient(system.url('device'));
  const member = await startMember(t, 'm');
  const port = await freePort();
  const deployed = await sdk.deployDeclaration({
    client,
    body: declaration('T', {
      vs: service(port, ['hostile']),
      p: { class: 'Pool', members: [{ servicePort: member.port, serverAddresses: ['127.0.0.1'] }] },
      hostile: { class: 'iRule', iRule: text },
    }) as never,
  });
  return { deployed, port, member, logs };
}

t.test(
  'F-rule-runaway: endless loops on 20 connections at once are each answered 500 at the configured step budget; the others are served',
  async (t) => {
    const text = 'when HTTP_REQUEST {\n  if { [HTTP::path] eq "/loop" } { while { 1 } { incr n } }\n}';
    const { deployed, port, member, logs } = await deployRule(t, text, { deviceRuleMaxSteps: 300 });
    t.equal(deployed.response?.status, 200, 'deployed');
    const loops = Array.from({ length: 20 }, () => through(port, { path: '/loop' }));
    const fine = Array.from({ length: 5 }, () => through(port, { path: '/fine' }));
    const [looped, served] = [await Promise.all(loops), await Promise.all(fine)];
    for (const answer of looped) t.match(answer, { status: 500, headers: { 'content-type': 'application/json' } });
    for (const answer of served) t.match(answer, { status: 200, body: 'm' });
    t.equal(member.received.length, 5, 'the member got only the requests the rule let through');
    t.match(logs.text(), /past its budget of 300 steps/, 'PORTOLAN_DEVICE_RULE_MAX_STEPS is the budget');
    t.match(await through(port, { path: '/after' }), { status: 200, body: 'm' }, 'the service goes on serving');
  },
);

t.test(
  'F-rule-huge-string: a string doubled without end, and a 2 MB field, end in 500 with the memory bound; nothing of it reaches anyone',
  async (t) => {
    const text = [
      'when HTTP_REQUEST {',
      '  if { [HTTP::path] eq "/double" } { set s x; while { 1 } { append s $s } }',
      '  if { [HTTP::path] eq "/field" } { HTTP::header insert X-Big [string repeat y 2000000] }',
      '}',
    ].join('\n');
    const { deployed, port, member, logs } = await deployRule(t, text, { deviceRuleMaxSteps: 10_000_000 });
    t.equal(deployed.response?.status, 200, 'deployed');
    for (const path of ['/double', '/field']) {
      const answer = await through(port, { path });
      t.match(answer, { status: 500 }, `${path}: 500`);
      if (answer !== 'refused') t.ok(answer.body.length < 200, `${path}: a short answer, none of the string`);
    }
    t.equal(member.received.length, 0, 'no member got a request');
    t.match(logs.text(), /built more than 1048576 bytes/, 'the bound on text built ended both');
    t.ok(logs.text().length < 20_000, 'the log holds none of the string');
  },
);

t.test('F-rule-header-split: a rule writing a line break into a field or the target cannot split the request or the answer', async (t) => {
  const text = [
    'when HTTP_REQUEST {',
    '  if { [HTTP::path] eq "/field" } { HTTP::header insert X-A "a\\r\\nX-Injected: 1" }',
    '  if { [HTTP::path] eq "/target" } { HTTP::uri "/x HTTP/1.1\\r\\nX-Injected: 1\\r\\n\\r\\nGET /y" }',
    '  if { [HTTP::path] eq "/answer" } { HTTP::respond 200 content ok X-B "b\\nX-Injected: 1" }',
    '}',
    'when HTTP_RESPONSE { HTTP::header insert X-C "c\\r\\nX-Injected: 1" }',
  ].join('\n');
  const { deployed, port, member } = await deployRule(t, text);
  t.equal(deployed.response?.status, 200, 'deployed');
  for (const path of ['/field', '/target', '/answer', '/plain']) {
    const answer = await through(port, { path });
    t.match(answer, { status: 500 }, `${path}: 500`);
    if (answer !== 'refused') t.equal(answer.headers['x-injected'], undefined, `${path}: no field of the rule's making`);
  }
  t.equal(member.received.length, 1, 'only /plain reached the member (its answer was the one HTTP_RESPONSE spoilt)');
  t.equal(member.received[0]?.headers['x-injected'], undefined, 'and it carried no injected field');
});

t.test('F-rule-deep-nesting: brackets and bodies nested 5000 deep are refused at attach time (422), the device unharmed', async (t) => {
  const brackets = `when HTTP_REQUEST {\n  set a ${'[string length '.repeat(5000)}x${']'.repeat(5000)}\n}`;
  const bodies = `when HTTP_REQUEST {\n  ${'if { 1 } { '.repeat(5000)}set a 1${' }'.repeat(5000)}\n}`;
  for (const [what, text] of [
    ['brackets', brackets],
    ['if bodies', bodies],
  ] as const) {
    const { deployed, port } = await deployRule(t, text);
    t.equal(deployed.response?.status, 422, `${what}: refused`);
    t.match(JSON.stringify(deployed.error), /hostile/, `${what}: the answer names the rule`);
    t.ok(JSON.stringify(deployed.error).length < 2000, `${what}: a bounded answer, not the rule's text`);
    t.equal(await through(port), 'refused', `${what}: nothing listens`);
  }
});
