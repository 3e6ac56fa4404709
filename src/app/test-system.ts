import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { loadConfig, type Config } from './config.ts';
import { createFakeClock } from '../lib/clock.ts';
import { ROLE_NAMES } from '../lib/roles.ts';
import { startSystem, type SystemDependencies } from './system.ts';
import type { Authenticators } from '../server/security.ts';

type Teardown = { teardown(fn: () => unknown): void };

/** A fresh embedded database file in a temporary directory, removed when the test ends. */
export function tempSqliteUrl(t: Teardown): { url: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'portolan-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return { url: `sqlite:${join(dir, 'data', 'portolan.db')}`, dir };
}

export type TestSystemOptions = {
  config?: Partial<Config>;
  handlers?: SystemDependencies['handlers'];
  /** The interfaces to serve (default: MODULES). */
  modules?: SystemDependencies['modules'];
  /** Run the request path's deadlines on the test's fake clock (nothing times out unless it is advanced). */
  fakeTimers?: boolean;
  /** Let every request past every security scheme (tests of what comes after security). */
  openSecurity?: boolean;
  logger?: Logger;
  /** Receives a generated administrative password (default: dropped, so test output stays clean). */
  announce?: (message: string) => void;
};

/**
 * Starts the whole system for a test on ephemeral ports, response validation on, a fresh embedded
 * store unless `config.database` names one; stops it when the test ends.
 */
export async function startTestSystem(t: Teardown, options: TestSystemOptions = {}) {
  const scratch = tempSqliteUrl(t);
  const database = options.config?.database ?? scratch.url;
  // The device's and the snapshots' files go to the test's own directory; deployed services listen on their virtual port
  // as given (tests pick free ephemeral ports), not 10000 above it.
  const config = loadConfig(Object.fromEntries(ROLE_NAMES.map((r) => [`PORTOLAN_${r.toUpperCase()}_PORT`, '0'])), {
    validateResponses: true,
    logLevel: 'silent',
    deviceDataDir: join(scratch.dir, 'device'),
    devicePortOffset: 0,
    snapshotDataDir: join(scratch.dir, 'snapshots'),
    ...options.config,
    database,
  });
  const clock = createFakeClock();
  const system = await startSystem(config, {
    logger: options.logger ?? pino({ level: 'silent' }),
    clock,
    announce: options.announce ?? (() => {}),
    ...(options.handlers ? { handlers: options.handlers } : {}),
    ...(options.openSecurity ? { authenticators: OPEN_SECURITY } : {}),
    ...(options.modules ? { modules: options.modules } : {}),
    ...(options.fakeTimers ? { timers: clock } : {}),
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await system.stop({ timeoutMs: 1000 });
  };
  t.teardown(stop);
  return { system, clock, config, stop };
}

/** Every scheme of every interface passes (a proxy: any scheme name has an authenticator that allows). */
const allowAll: Authenticators = new Proxy({}, { get: () => () => ({ ok: true }) });
const OPEN_SECURITY: Readonly<Record<string, Authenticators>> = new Proxy({}, { get: () => allowAll });
