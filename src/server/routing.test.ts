import t from 'tap';
import { INTERFACES, loadSpec, type InterfaceName } from '../lib/spec-catalog.ts';
import type { RoleName } from '../lib/roles.ts';
import { buildExampleRequest } from '../lib/contract/example-request.ts';
import type { HandlerMap } from './handler-types.ts';
import { startTestSystem } from './test-system.ts';
import { loadInterfaceRuntime } from './interface-runtime.ts';

// Every handler is replaced by a probe that names the operation it was routed to.
const runtimes = await Promise.all(INTERFACES.map((i) => loadInterfaceRuntime(i.name)));
const probes = Object.fromEntries(
  runtimes.map((r) => [
    r.name,
    Object.fromEntries(r.operations.map((op) => [op.operationId, () => ({ status: 299, body: { routed: op.operationId } })])),
  ]),
) as Partial<Record<InterfaceName, HandlerMap>>;

const { system } = await startTestSystem(t, { config: { validateResponses: false }, handlers: probes });

for (const runtime of runtimes) {
  const doc = loadSpec(runtime.name);
  for (const op of runtime.operations) {
    for (const role of op.roles) {
      t.test(`${runtime.name} ${op.operationId} (${op.method.toUpperCase()} ${op.path}) is routed on the ${role} role`, async (t) => {
        const request = await buildExampleRequest(doc, op);
        const response = await fetch(`${system.url(role as RoleName)}${request.url}`, {
          method: request.method,
          headers: request.headers,
          body: request.body,
          redirect: 'manual',
        });
        const text = await response.text();
        t.equal(response.status, 299, `probe answered (got ${response.status}: ${text.slice(0, 300)})`);
        if (response.status === 299) t.same(JSON.parse(text), { routed: op.operationId });
      });
    }
  }
}

t.test('no operation is served on a role its spec does not name', async (t) => {
  for (const { role, app } of system.roles) {
    for (const op of app.operations) t.ok(op.roles.includes(role), `${op.operationId} on ${role}`);
  }
});
