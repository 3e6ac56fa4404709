import t from 'tap';
import { ok } from '../../lib/errors.ts';
import { MAX_PATCHED_TENANTS, type PatchDeps, patchDeclaration } from './appsvcs-patch.ts';
import type { SchemaAt } from './declaration/declaration-check.ts';
import { codedError } from './device-errors.ts';

const HEADER = { class: 'ADC', schemaVersion: '3.56.0', id: 'deployed' };

/** A service with tenants `T0`..`T<count-1>` deployed, counting its reads, keeping what it is asked to deploy. */
function fakeService(count: number) {
  const tenants = Object.fromEntries(Array.from({ length: count }, (_, i) => [`T${i}`, { class: 'Tenant', label: `t${i}` }]));
  const reads = { tenantDeclaration: 0, declaration: 0 };
  const deployed: unknown[] = [];
  const service = {
    async tenantDeclaration(names: readonly string[]) {
      reads.tenantDeclaration++;
      const missing = names.filter((n) => !Object.hasOwn(tenants, n));
      if (missing.length > 0) return { ok: false as const, error: codedError('tenantNotFound', `'${missing.join(',')}' not found`) };
      return ok(JSON.stringify({ ...HEADER, ...Object.fromEntries(names.map((n) => [n, tenants[n]])) }));
    },
    async declaration() {
      reads.declaration++;
      return JSON.stringify({ ...HEADER, ...tenants });
    },
    async deploy(raw: Uint8Array | undefined) {
      deployed.push(JSON.parse(Buffer.from(raw!).toString('utf8')));
      return ok({ kind: 'done' as const, json: '{}' });
    },
  };
  return { service: service as unknown as PatchDeps['service'], reads, deployed };
}

// The body's shape is the schema's concern (checked in declarative-more.test.ts): here every body passes.
const anyBody = Object.assign(() => true, { errors: null });
const deps = (service: PatchDeps['service']): PatchDeps => ({
  service,
  schemas: async () => (() => anyBody) as unknown as SchemaAt,
  schemaCurrent: '3.56.0',
});

t.test('the named tenants are read in one go, not one read each', async (t) => {
  const { service, reads, deployed } = fakeService(60);
  const deployedOnes = Array.from({ length: 50 }, (_, i) => ({ op: 'replace', path: `/T${i}/label`, value: `patched ${i}` }));
  const outcome = await patchDeclaration(deps(service), deployedOnes);
  t.ok(outcome.ok);
  t.equal(reads.tenantDeclaration, 2, 'the header, then the 50 tenants together');
  t.equal(reads.declaration, 0);
  t.match(deployed[0], { id: 'deployed', T0: { label: 'patched 0' }, T49: { label: 'patched 49' } });
  t.notOk(Object.hasOwn(deployed[0] as object, 'T50'), 'a tenant the patch does not name is not deployed again');

  // A new tenant among them: the named ones cannot be read together, so the whole declaration is read once.
  const withNew = [...deployedOnes, { op: 'add', path: '/New', value: { class: 'Tenant' } }, { op: 'remove', path: '/T1' }];
  const again = fakeService(60);
  t.ok((await patchDeclaration(deps(again.service), withNew)).ok);
  t.same(again.reads, { tenantDeclaration: 2, declaration: 1 });
  const sent = again.deployed[0] as Record<string, unknown>;
  t.match(sent, { id: 'deployed', New: { class: 'Tenant' }, T0: { label: 'patched 0' }, T1: { class: 'Tenant' } });
  t.notOk(Object.hasOwn(sent.T1 as object, 'label'), 'a deployed tenant the patch removed is sent empty: removed');
  t.notOk(Object.hasOwn(sent, 'T55'), 'only the named tenants are picked from the whole declaration');
});

t.test(`a patch naming more than ${MAX_PATCHED_TENANTS} tenants is refused before any is read`, async (t) => {
  const { service, reads, deployed } = fakeService(200);
  const ops = (n: number) => Array.from({ length: n }, (_, i) => ({ op: 'copy', from: `/T${2 * i}`, path: `/T${2 * i + 1}` }));
  const refused = await patchDeclaration(deps(service), ops(MAX_PATCHED_TENANTS / 2 + 1));
  t.same(refused, {
    ok: false,
    error: {
      code: 'declarationInvalid',
      message: `invalid patch - names ${MAX_PATCHED_TENANTS + 2} tenants; at most ${MAX_PATCHED_TENANTS} may be patched at once`,
    },
  });
  t.same(reads, { tenantDeclaration: 0, declaration: 0 });
  t.same(deployed, []);
  t.ok((await patchDeclaration(deps(service), ops(MAX_PATCHED_TENANTS / 2))).ok, 'exactly the bound: patched');
});
