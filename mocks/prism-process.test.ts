import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findFreePort, findFreePorts, startPrism, waitUntilListening } from './prism-process.ts';

t.test('a Prism server that does not listen in time is reported by spec and port, and stops', async (t) => {
  const port = await findFreePort();
  const child = startPrism({ interfaceName: 'health', port });
  t.teardown(() => child.stop(0));
  await t.rejects(waitUntilListening(child, 1), { message: `Prism for health did not listen on port ${port} within 1 ms.` });
  await child.stop();
  t.not(child.process.exitCode ?? child.process.signalCode, null, 'the child has ended');
});

t.test('a port another program holds is not taken for Prism: its exit is reported with its output', async (t) => {
  const occupant = createServer((_req, res) => res.end('not prism'));
  await new Promise<void>((resolve) => occupant.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => occupant.close(resolve)));
  const child = startPrism({ interfaceName: 'health', port: (occupant.address() as AddressInfo).port });
  t.teardown(() => child.stop(0));
  await t.rejects(waitUntilListening(child), /^Prism for health exited before listening \(code \d+\):\n[\s\S]*EADDRINUSE/);
});

t.test('free ports for a fleet are all different: each is held until all are chosen', async (t) => {
  const ports = await findFreePorts(16);
  t.equal(new Set(ports).size, 16);
  t.ok(ports.every((port) => Number.isInteger(port) && port > 0));
});
