// `startPrismMocks`: the Prism mocks of the specs, all in this process: one Prism server per spec on a
// loopback port, and one front per role on the role's mock port that routes each request to its spec.
import type { RoleName } from '../src/lib/roles.ts';
import type { InterfaceName } from '../src/lib/spec-catalog.ts';
import { startMockFront, type MockFront } from './prism-front.ts';
import type { PrismLogEntry, PrismLogLevel } from './prism-log.ts';
import { planMocks } from './prism-plan.ts';
import { startPrismServer, type PrismServer } from './prism-server.ts';

export type PrismMocksOptions = {
  /** Specs to mock (default: all eight). */
  interfaces?: readonly InterfaceName[];
  /** Generated bodies instead of the named examples. */
  dynamic?: boolean;
  /** Dynamic mode: a seed makes the generated answers repeatable. */
  seed?: string;
  /** Added to every role's mock port (role port + 1000), for parallel runs. */
  portOffset?: number;
  /** Explicit front ports per role; 0 picks a free one (tests). Wins over the offset. */
  ports?: Partial<Record<RoleName, number>>;
  /** Address the fronts listen on (default 127.0.0.1); the Prism servers stay on loopback. */
  host?: string;
  /** Prism's log level (default `error`). */
  logLevel?: PrismLogLevel;
  /** Each entry Prism logs at that level or above, with its spec. */
  onLog?: (interfaceName: InterfaceName, entry: PrismLogEntry) => void;
};

export type RunningMockRole = {
  role: RoleName;
  port: number;
  url: string;
  /** The specs answered on this role, including `viaPool`. */
  interfaces: InterfaceName[];
  /** The specs the gateway passes on to its pool (the mapping role), as the reference gateway does. */
  viaPool: InterfaceName[];
};

export type PrismMocks = {
  roles: readonly RunningMockRole[];
  url(role: RoleName): string;
  /** Closes the fronts and the Prism servers. */
  stop(): Promise<void>;
};

/** A role's front could not listen (the port is in use, the address is not this machine's, ...). */
export class MockListenError extends Error {
  readonly role: RoleName;
  readonly host: string;
  readonly port: number;
  readonly code: string | undefined;
  constructor(role: RoleName, host: string, port: number, cause: NodeJS.ErrnoException) {
    const reason = cause.code === 'EADDRINUSE' ? 'the port is in use' : (cause.code ?? cause.message);
    super(`Cannot listen for the ${role} role on ${host}:${port}: ${reason}.`, { cause });
    this.role = role;
    this.host = host;
    this.port = port;
    this.code = cause.code;
  }
}

/**
 * Starts one Prism server per spec (in this process, in parallel, each on a loopback port) and one
 * front listener per role on role port + 1000 (+ `portOffset`, or `ports`), routing each request to the
 * spec that serves it on that role. Resolves once every role answers; on any failure, everything
 * started is closed again before it rejects.
 *
 * @example
 * const mocks = await startPrismMocks({ interfaces: ['mapping'] });
 * await fetch(`${mocks.url('mapping')}/api/charts`); // the spec's named example
 * await mocks.stop();
 */
export async function startPrismMocks(options: PrismMocksOptions = {}): Promise<PrismMocks> {
  const plan = planMocks(options.interfaces ?? [], options.portOffset ?? 0);
  const host = options.host ?? '127.0.0.1';
  const servers: PrismServer[] = [];
  const fronts: MockFront[] = [];
  const stop = async () => {
    await Promise.all(fronts.map((f) => f.close()));
    await Promise.all(servers.map((s) => s.close()));
  };
  try {
    const started = await Promise.allSettled(
      plan.interfaces.map((interfaceName) =>
        startPrismServer({
          interfaceName,
          ...(options.dynamic ? { dynamic: true } : {}),
          ...(options.seed !== undefined ? { seed: options.seed } : {}),
          ...(options.logLevel ? { logLevel: options.logLevel } : {}),
          onLog: (entry) => options.onLog?.(interfaceName, entry),
        }),
      ),
    );
    for (const result of started) if (result.status === 'fulfilled') servers.push(result.value);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    const prismPorts = new Map(servers.map((s) => [s.interfaceName, s.port]));
    const roles: RunningMockRole[] = [];
    for (const role of plan.roles) {
      const port = options.ports?.[role.role] ?? role.port;
      const front = await startMockFront(role, prismPorts, host, port).catch((error: NodeJS.ErrnoException) => {
        throw new MockListenError(role.role, host, port, error);
      });
      fronts.push(front);
      const shown = host.includes(':') ? `[${host}]` : host;
      roles.push({
        role: role.role,
        port: front.port,
        url: `http://${shown}:${front.port}`,
        interfaces: role.interfaces,
        viaPool: role.viaPool,
      });
    }
    return { roles, url: (role) => roles.find((r) => r.role === role)?.url ?? missing(role), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function missing(role: RoleName): never {
  throw new Error(`No mock serves the ${role} role: none of the chosen specs has an operation there.`);
}
