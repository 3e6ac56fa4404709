import { ROLE_DEFINITIONS, ROLE_NAMES, type RoleName } from '../src/lib/roles.ts';
import { INTERFACES, listOperations, loadSpec, type InterfaceName, type OperationEntry } from '../src/lib/spec-catalog.ts';
import { operationsOnRole } from './gateway-pool.ts';

/** Each mock role listens on its reference port plus this, so mocks and `npm start` can run side by side. */
export const MOCK_PORT_SHIFT = 1000;

/** An operation as a mock routes it: which spec answers it. */
export type MockOperation = OperationEntry & { interfaceName: InterfaceName };

export type MockRolePlan = {
  role: RoleName;
  /** Role port + 1000 + offset. */
  port: number;
  /** The chosen specs that serve at least one operation on this role (its own, then its pool's). */
  interfaces: InterfaceName[];
  /** The specs reached through the pool (gateway only). */
  viaPool: InterfaceName[];
  operations: MockOperation[];
};

export type MockPlan = { interfaces: InterfaceName[]; roles: MockRolePlan[] };

/** Interface names as typed on the command line, refused with the list of known ones; none means all. */
export function parseInterfaceNames(names: readonly string[]): InterfaceName[] {
  const known = INTERFACES.map((i) => i.name as string);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0)
    throw new Error(`Unknown interface${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; known: ${known.join(', ')}.`);
  return names.length === 0 ? INTERFACES.map((i) => i.name) : [...new Set(names as InterfaceName[])];
}

/**
 * Which roles the chosen specs need and on which port each listens. The roles come from the specs'
 * `x-portolan-role` servers, so a spec's operations are mocked exactly where the reference serves them.
 * No interfaces chosen means all eight.
 */
export function planMocks(chosen: readonly InterfaceName[], portOffset = 0): MockPlan {
  const interfaces = chosen.length > 0 ? [...new Set(chosen)] : INTERFACES.map((i) => i.name);
  const operations = interfaces.flatMap((name) => listOperations(loadSpec(name)).map((op) => ({ ...op, interfaceName: name })));
  const roles = ROLE_NAMES.flatMap((role): MockRolePlan[] => {
    const { own, viaPool } = operationsOnRole(operations, role);
    if (own.length === 0) return [];
    const port = ROLE_DEFINITIONS[role].defaultPort + MOCK_PORT_SHIFT + portOffset;
    const names = (ops: MockOperation[]) => [...new Set(ops.map((op) => op.interfaceName))];
    return [
      {
        role,
        port,
        interfaces: names([...own, ...viaPool]),
        viaPool: names(viaPool).filter((n) => !names(own).includes(n)),
        operations: [...own, ...viaPool],
      },
    ];
  });
  return { interfaces, roles };
}
