// Which port each mocked role listens on: role port + 1000 + the mocks' own offset (`--port-offset`, else
// PORTOLAN_MOCK_PORT_OFFSET). The mocks read none of `portolan start`'s port settings, so exporting those
// (PORTOLAN_PORT_OFFSET, PORTOLAN_<ROLE>_PORT) never puts a mock on a port the reference system uses.
import { createServer } from 'node:net';
import { port as portSchema } from '../src/lib/config.ts';
import type { Result } from '../src/lib/errors.ts';
import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from '../src/lib/roles.ts';
import { MOCK_PORT_SHIFT } from './prism-plan.ts';

/** The environment variable of the mocks' offset (the same as `--port-offset`, which wins over it). */
export const MOCK_PORT_OFFSET_ENV = 'PORTOLAN_MOCK_PORT_OFFSET';

/** The mocks' offset and what set it: the flag, the environment variable, or neither (0). */
export type MockOffset = { value: number; from: '--port-offset' | typeof MOCK_PORT_OFFSET_ENV | 'default' };

/** Where a mock listens when nothing moves it: role port + 1000. */
export const mockBasePort = (role: RoleName) => ROLE_DEFINITIONS[role].defaultPort + MOCK_PORT_SHIFT;

/**
 * The mocks' offset: `--port-offset` when given, else PORTOLAN_MOCK_PORT_OFFSET, else 0; or the one line
 * saying which of them is not a whole number.
 *
 * @example mockPortOffset(undefined, { PORTOLAN_MOCK_PORT_OFFSET: '-1500' }) // { ok: true, value: { value: -1500, from: 'PORTOLAN_MOCK_PORT_OFFSET' } }
 */
export function mockPortOffset(flag: string | undefined, env: Record<string, string | undefined>): Result<MockOffset, string> {
  const fromEnv = env[MOCK_PORT_OFFSET_ENV];
  const [text, from]: [string, MockOffset['from']] =
    flag !== undefined
      ? [flag, '--port-offset']
      : fromEnv !== undefined && fromEnv.trim() !== ''
        ? [fromEnv.trim(), MOCK_PORT_OFFSET_ENV]
        : ['0', 'default'];
  if (!/^[+-]?\d{1,6}$/.test(text))
    return { ok: false, error: `${from} must be a whole number (e.g. 100 or -1500), got '${text.slice(0, 20)}'` };
  return { ok: true, value: { value: Number(text), from } };
}

/**
 * The port of each role: role port + 1000 + the offset; or the one line naming the first role the offset
 * puts outside 1..65535 and what set the offset.
 *
 * @example
 * resolveMockPorts(['mapping'], { value: -1500, from: '--port-offset' }) // { ok: true, value: { mapping: 7581 } }
 */
export function resolveMockPorts(roles: readonly RoleName[], offset: MockOffset): Result<Record<RoleName, number>, string> {
  const ports: Partial<Record<RoleName, number>> = {};
  for (const role of roles) {
    const base = mockBasePort(role);
    const value = base + offset.value;
    if (value < 1 || value > portSchema.maximum) {
      const fix = offset.from === 'default' ? '--port-offset' : offset.from;
      return {
        ok: false,
        error: `${fix} ${offset.value} puts the ${role} mock on port ${base} ${offset.value < 0 ? '-' : '+'} ${Math.abs(offset.value)} = ${value}, outside 1..${portSchema.maximum}: choose an offset that keeps every mock's port in range`,
      };
    }
    ports[role] = value;
  }
  return { ok: true, value: ports as Record<RoleName, number> };
}

/**
 * An offset that puts every mock (or those of `roles`) on a port free right now, each bound once and
 * released: for tests and benchmarks, which never listen on a fixed port. Still a snapshot: another
 * program may take a port before the mocks bind it (the mocks then fail with one line, and a caller may retry).
 *
 * @example
 * const offset = await freeMockPortOffset();
 * await runMockCommand(['--port-offset', String(offset)], io);
 */
export async function freeMockPortOffset(roles: readonly RoleName[] = ROLE_NAMES): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // The OS's choice of a free port for the first role; the others follow at their distances from it.
    const first = await bindAll([0]);
    const offset = first[0]! - mockBasePort(roles[0]!);
    const ports = roles.slice(1).map((role) => mockBasePort(role) + offset);
    if (
      ports.every((p) => p >= 1024 && p <= portSchema.maximum) &&
      (await bindAll(ports).then(
        () => true,
        () => false,
      ))
    )
      return offset;
  }
  throw new Error('found no offset that puts every mock on a free port in 50 attempts');
}

/** Binds every port on 127.0.0.1 at once, then releases them; answers the bound ports. Rejects when one is taken. */
async function bindAll(ports: readonly number[]): Promise<number[]> {
  const servers = ports.map(() => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server, i) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject);
            server.listen({ port: ports[i], host: '127.0.0.1', exclusive: true }, () =>
              resolve((server.address() as { port: number }).port),
            );
          }),
      ),
    );
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => (server.listening ? server.close(resolve) : resolve(undefined)))));
  }
}
