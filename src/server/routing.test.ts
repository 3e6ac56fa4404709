import t from 'tap';
import { request as send } from 'undici';
import { INTERFACES, loadSpec, type InterfaceName } from '../lib/spec-catalog.ts';
import type { RoleName } from '../lib/roles.ts';
import { buildExampleRequest } from '../lib/contract/example-request.ts';
import type { HandlerMap } from './handler-types.ts';
import { startTestSystem } from '../app/test-system.ts';
import { loadInterfaceRuntime } from './interface-runtime.ts';

// Every handler is replaced by a probe that names the operation it was routed to.
const runtimes = await Promise.all(INTERFACES.map((i) => loadInterfaceRuntime(i.name)));
const probes = Object.fromEntries(
  runtimes.map((r) => [
    r.name,
    Object.fromEntries(r.operations.map((op) => [op.operationId, () => ({ status: 299, body: { routed: op.operationId } })])),
  ]),
) as Partial<Record<InterfaceName, HandlerMap>>;

const { system } = await startTestSystem(t, { config: { validateResponses: false }, handlers: probes, openSecurity: true });

for (const runtime of runtimes) {
  const doc = loadSpec(runtime.name as InterfaceName);
  for (const op of runtime.operations) {
    for (const role of op.roles) {
      t.test(`${runtime.name} ${op.operationId} (${op.method.toUpperCase()} ${op.path}) is routed on the ${role} role`, async (t) => {
        const request = await buildExampleRequest(doc, op);
        // Registration is answered only with the configured Host (seed D); fetch cannot set Host.
        const host = op.operationId === 'registerClient' ? { host: system.config.registrationHost } : {};
        const response = await send(`${system.url(role as RoleName)}${request.url}`, {
          method: request.method as 'GET',
          headers: { ...request.headers, ...host },
          ...(request.body ? { body: request.body } : {}),
        });
        const text = await response.body.text();
        t.equal(response.statusCode, 299, `probe answered (got ${response.statusCode}: ${text.slice(0, 300)})`);
        if (response.statusCode === 299) t.same(JSON.parse(text), { routed: op.operationId });
      });
    }
  }
}

t.test('no operation is served on a role its spec does not name', async (t) => {
  for (const { role, app } of system.roles) {
    for (const op of app.operations) t.ok(op.roles.includes(role), `${op.operationId} on ${role}`);
  }
});
