import t from 'tap';
import { refusalMessage } from './deploy-rules.ts';
import { planTenant } from './plan.ts';
import { collectWarnings } from './warnings.ts';

const tenant = (members: Record<string, unknown>) => ({ class: 'Tenant', A: { class: 'Application', ...members } });
const vs = (iRules: unknown[]) => ({ class: 'Service_HTTP', virtualAddresses: ['127.0.0.1'], iRules });

t.test("a service's iRules are planned in order, with the tenant's texts, pools and data groups", async (t) => {
  const planned = planTenant(
    'T',
    tenant({
      vs: vs(['r1', { use: '/T/A/r2' }, { bigip: '/Common/stored' }]),
      r1: { class: 'iRule', iRule: 'when HTTP_REQUEST { pool p }' },
      r2: { class: 'iRule', iRule: { base64: Buffer.from('when HTTP_RESPONSE { }').toString('base64') } },
      p: { class: 'Pool', members: [{ servicePort: 80, serverAddresses: ['127.0.0.2'] }] },
      dg: { class: 'Data_Group', keyDataType: 'ip', records: [{ key: '10.0.0.0/8', value: 'inside' }] },
    }),
  );
  t.match(planned, {
    ok: true,
    plan: {
      services: [{ key: '/T/A/vs', iRules: [{ path: '/T/A/r1' }, { path: '/T/A/r2' }, { path: '/Common/stored', stored: true }] }],
      rules: {
        texts: { '/T/A/r1': 'when HTTP_REQUEST { pool p }', '/T/A/r2': 'when HTTP_RESPONSE { }' },
        pools: { '/T/A/p': { members: [{ host: '127.0.0.2', port: 80 }] } },
        dataGroups: { '/T/A/dg': { type: 'address', records: [{ key: '10.0.0.0/8', value: 'inside' }] } },
      },
      warnings: [],
    },
  });
  t.notOk('rules' in (planTenant('T', tenant({ p: { class: 'Pool' } })) as { plan: object }).plan, 'no rules: nothing more in the plan');
});

t.test('a reference to no iRule, or an iRule that cannot be read, fails the tenant naming its pointer', async (t) => {
  const failure = (members: Record<string, unknown>) => {
    const planned = planTenant('T', tenant(members));
    return planned.ok ? 'planned' : planned.message;
  };
  t.equal(failure({ vs: vs(['none']) }), "/T/A/vs/iRules/0: iRule 'none' does not exist");
  t.equal(failure({ vs: vs([{ use: 'p' }]), p: { class: 'Pool' } }), "/T/A/vs/iRules/0: 'p' is not an iRule (class Pool)");
  t.match(
    failure({ vs: vs(['r']), r: { class: 'iRule', iRule: { url: 'https://example.test/r' } } }),
    /^\/T\/A\/r\/iRule\/url: .*not supported/,
  );
  t.match(
    failure({ vs: vs(['r']), r: { class: 'iRule', iRule: 'x' }, dg: { class: 'Data_Group', keyDataType: 'float' } }),
    /^\/T\/A\/dg\/keyDataType: /,
  );
});

t.test('an iRule in base64 is read with its whitespace, and a text that is not base64 fails at once however long', async (t) => {
  const planned = (base64: string) => {
    const out = planTenant('T', tenant({ vs: vs(['r']), r: { class: 'iRule', iRule: { base64 } } }));
    return out.ok ? (out.plan as { rules?: { texts: Record<string, string> } }).rules?.texts['/T/A/r'] : out.message;
  };
  const encoded = Buffer.from('when HTTP_REQUEST { pool p }').toString('base64');
  t.equal(planned(` ${encoded.slice(0, 8)}\n${encoded.slice(8)}\r\n `), 'when HTTP_REQUEST { pool p }', 'line breaks anywhere');
  t.equal(planned(encoded.replace(/=+$/, '')), 'when HTTP_REQUEST { pool p }', 'unpadded, as Node reads it');
  t.equal(planned('QQ==QQ=='), '/T/A/r/iRule/base64: is not base64', 'padding only at the end');
  // Whitespace then one bad character: a pattern that backtracks over the whitespace is quadratic (this
  // 1 MB text would hold the event loop for many minutes); read in one pass it fails in milliseconds.
  t.equal(planned(`${' '.repeat(1 << 20)}!`), '/T/A/r/iRule/base64: is not base64');
  t.equal(planned(`${'A'.repeat(1 << 20)}\t=!`), '/T/A/r/iRule/base64: is not base64');
});

t.test('what runs is not warned about; what does not run here is', async (t) => {
  const warnings = collectWarnings(
    'T',
    tenant({
      vs: vs(['r', { use: '/Common/Shared/shared_rule' }]),
      r: { class: 'iRule', iRule: 'when HTTP_REQUEST { }' },
      dg: { class: 'Data_Group', records: [] },
      ext: { class: 'Data_Group', storageType: 'external' },
      bare: { class: 'iRule' },
    }),
  );
  t.same(warnings, [
    "/T/A/vs/iRules/1: iRule '/Common/Shared/shared_rule' of tenant Common is kept, not followed: it does not run here",
    '/T/A/ext: an external data group is kept, not applied: rules see no records of it',
    '/T/A/bare: class iRule is not modelled by this device; kept as given, not applied',
  ]);
});

t.test("a refused rule's message names the rule once, the line and the command", async (t) => {
  t.equal(
    refusalMessage({ rule: '/T/A/r', line: 3, command: 'FOO', message: 'rule "/T/A/r", line 3: unknown command "FOO"' }),
    '01070151:3: Rule [/T/A/r] error: line 3: unknown command "FOO"',
  );
  t.equal(
    refusalMessage({ rule: '/T/A/r', line: 2, command: 'FOO', message: 'not allowed here' }),
    '01070151:3: Rule [/T/A/r] error: line 2: FOO: not allowed here',
  );
});
