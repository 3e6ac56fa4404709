import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ROLE_NAMES, type RoleName } from '../src/lib/roles.ts';
import type { InterfaceName } from '../src/lib/spec-catalog.ts';
import { startPrismMocks, type PrismMocks } from '../mocks/prism-mocks.ts';
import type { Credential } from './auth.ts';
import type { TargetMap } from './targets.ts';

/** Where Prism breaks the specs it mocks, with why: the known failures of a stateless run against it. */
export const PRISM_KNOWN_FAILURES = fileURLToPath(new URL('./data/prism-known-failures.yaml', import.meta.url));

export type PrismTarget = {
  targets: TargetMap;
  credentials: Record<string, Credential>;
  mocks: PrismMocks;
  stop(): Promise<void>;
};

/**
 * Credentials for a Prism mock: it checks only that one is there, so any will do (made up here, never
 * read from the environment, where a real password may be).
 *
 * @example await runConformance({ targets, stateless: true, credentials: prismCredentials() });
 */
export function prismCredentials(): Record<string, Credential> {
  const any = (): Credential => ({ user: 'conformance@example.com', password: randomBytes(9).toString('base64url') });
  return { admin: any(), registration: any() };
}

/**
 * Starts the Prism mocks (mocks/prism-mocks.ts, named examples) as a conformance target for
 * `--target prism`: every role on a free loopback port, so a running `npm start` or `npm run mock`
 * is never in the way. Prism checks only that a credential is there, so any will do; the run must
 * be stateless (Prism keeps nothing between requests).
 */
export async function startPrismTarget(options: { interfaces?: readonly InterfaceName[] } = {}): Promise<PrismTarget> {
  const ports = Object.fromEntries(ROLE_NAMES.map((role) => [role, 0])) as Record<RoleName, number>;
  // Prism's own log lines (a violation it sees in its own XML examples) are noise here: the run reports.
  const mocks = await startPrismMocks({ ports, logLevel: 'error', ...(options.interfaces ? { interfaces: options.interfaces } : {}) });
  return {
    targets: Object.fromEntries(mocks.roles.map((r) => [r.role, r.url])),
    credentials: prismCredentials(),
    mocks,
    stop: () => mocks.stop(),
  };
}
