import { createClient } from '../../../generated/device-config/client/index.ts';
import { basicAuthorization } from '../../accounts/basic-auth.ts';
import { findFreePorts } from '../../lib/free-ports.ts';

// Pool members answer `/health` 200 and anything else with their name; `bodyThrough` gives the body of a
// GET through a deployed service, or 'refused' when nothing listens there.
export { startHttpMember as startMember } from '../../traffic/test-servers.ts';
export { bodyThrough as through } from '../../traffic/test-virtual-clients.ts';

export const ADMIN_PASSWORD = 'device admin pw';

/** A client of the device role with the administrative credentials. */
export const deviceClient = (baseUrl: string) =>
  createClient({ baseUrl, headers: { authorization: basicAuthorization('admin', ADMIN_PASSWORD) } });

/** A bare declaration of one tenant with one application holding the given services and pools. */
export function declaration(tenant: string, members: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    class: 'ADC',
    schemaVersion: '3.0.0',
    id: `decl-${tenant}`,
    ...extra,
    [tenant]: { class: 'Tenant', A1: { class: 'Application', template: 'generic', ...members } },
  };
}

/** A Service_HTTP on 127.0.0.1:port with its pool, and that pool over members on 127.0.0.1. */
export function serviceWithPool(
  service: string,
  pool: string,
  port: number,
  memberPorts: readonly number[],
  monitors: unknown[] = ['http'],
) {
  return {
    [service]: { class: 'Service_HTTP', virtualAddresses: ['127.0.0.1'], virtualPort: port, pool },
    [pool]: { class: 'Pool', monitors, members: memberPorts.map((p) => ({ servicePort: p, serverAddresses: ['127.0.0.1'] })) },
  };
}

/** A port nothing listens on right now (for a virtual port with offset 0). */
export const freePort = async (): Promise<number> => (await findFreePorts(1))[0]!;
