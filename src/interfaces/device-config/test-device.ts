import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '../../../generated/device-config/client/index.ts';
import { basicAuthorization } from '../../accounts/basic-auth.ts';

type Teardown = { teardown(fn: () => unknown): void };

export const ADMIN_PASSWORD = 'device admin pw';

/** A client of the device role with the administrative credentials. */
export const deviceClient = (baseUrl: string) => createClient({ baseUrl, headers: { authorization: basicAuthorization('admin', ADMIN_PASSWORD) } });

/** A pool member: answers `/health` 200 and anything else with its name. */
export async function startMember(t: Teardown, name: string): Promise<{ port: number; server: Server }> {
  const server = createServer((request, response) => {
    response.setHeader('content-type', 'text/plain');
    response.end(request.url === '/health' ? 'ok' : name);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { port: (server.address() as AddressInfo).port, server };
}

/** A port nothing listens on right now (for a virtual port with offset 0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A bare declaration of one tenant with one application holding the given services and pools. */
export function declaration(tenant: string, members: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { class: 'ADC', schemaVersion: '3.0.0', id: `decl-${tenant}`, ...extra, [tenant]: { class: 'Tenant', A1: { class: 'Application', template: 'generic', ...members } } };
}

/** A Service_HTTP on 127.0.0.1:port with its pool, and that pool over members on 127.0.0.1. */
export function serviceWithPool(service: string, pool: string, port: number, memberPorts: readonly number[], monitors: unknown[] = ['http']) {
  return {
    [service]: { class: 'Service_HTTP', virtualAddresses: ['127.0.0.1'], virtualPort: port, pool },
    [pool]: { class: 'Pool', monitors, members: memberPorts.map((p) => ({ servicePort: p, serverAddresses: ['127.0.0.1'] })) },
  };
}

/** The body of a GET through a deployed service; `refused` when nothing listens. */
export async function through(port: number, path = '/'): Promise<string> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${path}`);
    return await response.text();
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code === 'ECONNREFUSED') return 'refused';
    throw error;
  }
}
