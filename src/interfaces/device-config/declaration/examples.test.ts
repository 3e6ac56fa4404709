import t from 'tap';
import { checkDeployRequest } from './checked-request.ts';
import { EXAMPLES } from './test-examples.ts';
import { info, schemaAt } from './test-spec.ts';

// The device must accept every example whole: valid, every tenant planned, and what it does not model listed as warnings.

t.test('every example declaration is valid and every tenant of it plans', async (t) => {
  t.ok(EXAMPLES.length >= 15, `${EXAMPLES.length} examples`);
  for (const [name, body] of EXAMPLES) {
    const checked = checkDeployRequest(body, schemaAt, info, {});
    if (!checked.ok) {
      t.fail(`${name}: ${'errors' in checked ? checked.errors.join('; ') : 'malformed'}`);
      continue;
    }
    const tenants = checked.request.declaration?.tenants ?? [];
    t.ok(tenants.length > 0, `${name}: has tenants`);
    for (const [tenant, prepared] of tenants) {
      t.equal(prepared.kind, 'plan', `${name}: ${tenant} plans${prepared.kind === 'failed' ? ` (${prepared.message})` : ''}`);
    }
  }
});

t.test('what an example holds that the device does not model is reported, never dropped', async (t) => {
  const warningsOf = (name: string) => {
    const body = EXAMPLES.find(([n]) => n === name)![1];
    const checked = checkDeployRequest(body, schemaAt, info, {});
    if (!checked.ok) throw new Error(`${name} is invalid`);
    return checked.request.declaration!.tenants.flatMap(([, p]) => (p.kind === 'plan' ? p.plan.warnings : []));
  };
  t.match(warningsOf('https-tls-offload'), ["/Ex_Https/Site/template: template 'https' is applied as 'generic'"]);
  t.ok(
    warningsOf('waf-policy-reference').includes(
      '/Ex_Waf/Shop/shop_waf: class WAF_Policy is not modelled by this device; kept as given, not applied',
    ),
    'a WAF policy is kept and reported',
  );
  t.ok(
    warningsOf('shared-common-objects').some((w) => w.startsWith("/Ex_Uses_Shared/App/front/pool: pool '/Common/Shared/shared_pool'")),
    'a pool of /Common/Shared is reported',
  );
  t.ok(
    warningsOf('address-discovery').some((w) => w.includes("address discovery '/Common/Shared/cloud_discovery' is not applied")),
    'a discovery reference is reported',
  );
  t.same(warningsOf('http-one-service'), [
    '/Ex_Http/App/web_vs/virtualAddresses/0: 198.18.0.10 is not a loopback address; kept, not bound',
  ]);
});
