import type { RoleName } from '../src/lib/roles.ts';
import type { OperationEntry } from '../src/lib/spec-catalog.ts';

/**
 * Like the reference gateway, which passes every request it does not answer itself to its pool (the
 * mapping role, DESIGN.md), the gateway mocks also answer the mapping role's operations.
 */
export const POOL_OF: Partial<Record<RoleName, RoleName>> = { gateway: 'mapping' };

/** The operations served on a role, then those of its pool that it does not shadow (GET /health is its own). */
export function operationsOnRole<T extends OperationEntry>(operations: readonly T[], role: RoleName): { own: T[]; viaPool: T[] } {
  const own = operations.filter((op) => op.roles.includes(role));
  const pool = POOL_OF[role];
  if (!pool) return { own, viaPool: [] };
  const taken = new Set(own.map((op) => `${op.method} ${op.path}`));
  return { own, viaPool: operations.filter((op) => op.roles.includes(pool) && !taken.has(`${op.method} ${op.path}`)) };
}
