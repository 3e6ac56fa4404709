import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { systemClock } from '../src/lib/clock.ts';
import { loadConfig, type Config } from '../src/app/config.ts';
import { ROLE_NAMES } from '../src/lib/roles.ts';
import { startSystem, type System } from '../src/app/system.ts';
import type { Credential } from './auth.ts';
import type { TargetMap } from './targets.ts';

/** The reference system as a conformance target: its role URLs, the credentials it was started with. */
export type ReferenceTarget = {
  targets: TargetMap;
  credentials: Record<string, Credential>;
  /** Values of data/variables.yaml as this system is configured. */
  variables: Record<string, unknown>;
  stop(): Promise<void>;
};

export const CONFORMANCE_REGISTRATION_USER = 'conformance.user@example.com';

/**
 * Starts the whole reference system in this process for `--target reference`: every role on an
 * ephemeral port, a temporary embedded store, the real clock (the suite never fakes time), a fresh
 * administrative password and a registration user that the access profile accepts. `config`
 * overrides settings (tests: a small rate limit).
 */
export async function startReferenceTarget(options: { config?: Partial<Config> } = {}): Promise<ReferenceTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-conformance-'));
  const adminPassword = randomBytes(18).toString('base64url');
  const env: Record<string, string> = {
    ...Object.fromEntries(ROLE_NAMES.map((r) => [`PORTOLAN_${r.toUpperCase()}_PORT`, '0'])),
    PORTOLAN_HOST: '127.0.0.1',
    PORTOLAN_DATABASE: `sqlite:${join(dir, 'portolan.db')}`,
    PORTOLAN_DEVICE_DATA_DIR: join(dir, 'device'),
    PORTOLAN_SNAPSHOT_DATA_DIR: join(dir, 'snapshots'),
    PORTOLAN_LOG_LEVEL: 'silent',
    PORTOLAN_ADMIN_USER: 'admin',
    PORTOLAN_ADMIN_PASSWORD: adminPassword,
  };
  let system: System | undefined;
  try {
    const config = loadConfig(env, options.config);
    system = await startSystem(config, { logger: pino({ level: 'silent' }), clock: systemClock, announce: () => {} });
    return await describe(system, config, adminPassword, dir);
  } catch (error) {
    await system?.stop({ timeoutMs: 1000 });
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The target description of a running system (also for tests that start one with startTestSystem). */
export async function describe(
  system: System,
  config: ReturnType<typeof loadConfig>,
  adminPassword: string,
  dir?: string,
): Promise<ReferenceTarget> {
  const registrationPassword = randomBytes(18).toString('base64url');
  await system.accounts.setPassword(config.registrationAccessProfile, CONFORMANCE_REGISTRATION_USER, registrationPassword);
  return {
    targets: Object.fromEntries(system.roles.map((r) => [r.role, r.url])),
    credentials: {
      admin: { user: config.adminUser, password: adminPassword },
      registration: { user: CONFORMANCE_REGISTRATION_USER, password: registrationPassword },
    },
    variables: {
      rateLimit: config.rateLimitLimit,
      rateLimitWindow: config.rateLimitWindowSeconds,
      // The running system's: a registration host derived from a gateway port of 0 names the port it got.
      registrationHost: system.config.registrationHost,
      oversizeBytes: config.bodyLimitBytes + 1,
      registrationOversizeBytes: config.registrationMaxBodyBytes + 1,
      registrationPartition: config.registrationPartition,
      registrationOauthProfile: config.registrationOauthProfile,
      registrationAccessPolicy: config.registrationAccessPolicy,
    },
    stop: async () => {
      await system.stop({ timeoutMs: 1000 });
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
