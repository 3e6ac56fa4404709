import type { RoleName } from '../src/lib/roles.ts';
import type { InterfaceName } from '../src/lib/spec-catalog.ts';
import { startMockFront, type MockFront } from './prism-front.ts';
import { planMocks } from './prism-plan.ts';
import { findFreePorts, startPrism, waitUntilListening, type PrismChild } from './prism-process.ts';

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
  /** Address the fronts listen on (default 127.0.0.1); the Prism children stay on loopback. */
  host?: string;
  logLevel?: 'error' | 'warn';
  /** Each line a Prism child writes, with its spec. */
  onOutput?: (interfaceName: InterfaceName, line: string) => void;
  /** How long the Prism children get to start listening (default 60 s). */
  startTimeoutMs?: number;
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
  /** Settles when a Prism child ends before `stop()` was called: the mocks are then broken. */
  childExited: Promise<{ interfaceName: InterfaceName; code: number | null; signal: NodeJS.Signals | null; output: string[] }>;
  /** Closes the fronts and ends every child. */
  stop(): Promise<void>;
};

/**
 * Starts one Prism mock server per spec on an internal port (all in parallel) and one front listener
 * per role on role port + 1000, routing each request to the spec that serves it on that role.
 *
 * @example
 * const mocks = await startPrismMocks({ interfaces: ['mapping'] });
 * await fetch(`${mocks.url('mapping')}/api/charts`); // the spec's named example
 * await mocks.stop();
 */
export async function startPrismMocks(options: PrismMocksOptions = {}): Promise<PrismMocks> {
  const plan = planMocks(options.interfaces ?? [], options.portOffset ?? 0);
  const host = options.host ?? '127.0.0.1';
  const children: PrismChild[] = [];
  const fronts: MockFront[] = [];
  let stopping = false;
  const stop = async () => {
    stopping = true;
    await Promise.all(fronts.map((f) => f.close()));
    await Promise.all(children.map((c) => c.stop()));
  };
  try {
    const ports = await findFreePorts(plan.interfaces.length);
    for (const [index, interfaceName] of plan.interfaces.entries()) {
      const port = ports[index]!;
      children.push(startPrism({
        interfaceName,
        port,
        ...(options.dynamic ? { dynamic: true } : {}),
        ...(options.seed !== undefined ? { seed: options.seed } : {}),
        ...(options.logLevel ? { logLevel: options.logLevel } : {}),
        onOutput: (line) => options.onOutput?.(interfaceName, line),
      }));
    }
    const prismPorts = new Map(children.map((c) => [c.interfaceName, c.port]));
    const roles: RunningMockRole[] = [];
    for (const role of plan.roles) {
      const port = options.ports?.[role.role] ?? role.port;
      const front = await startMockFront(role, prismPorts, host, port).catch((error: NodeJS.ErrnoException) => {
        const hint = error.code === 'EADDRINUSE' ? ' is in use (try --port-offset)' : `: ${error.code ?? error.message}`;
        throw new Error(`Cannot listen for the ${role.role} role on ${host}:${port}${hint}.`, { cause: error });
      });
      fronts.push(front);
      const shown = host.includes(':') ? `[${host}]` : host;
      roles.push({ role: role.role, port: front.port, url: `http://${shown}:${front.port}`, interfaces: role.interfaces, viaPool: role.viaPool });
    }
    await Promise.all(children.map((c) => waitUntilListening(c, options.startTimeoutMs)));
    const childExited = new Promise<Awaited<PrismMocks['childExited']>>((resolve) => {
      for (const child of children) {
        void child.exited.then(({ code, signal }) => {
          if (!stopping) resolve({ interfaceName: child.interfaceName, code, signal, output: child.recentOutput() });
        });
      }
    });
    return { roles, url: (role) => roles.find((r) => r.role === role)?.url ?? missing(role), childExited, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function missing(role: RoleName): never {
  throw new Error(`No mock serves the ${role} role: none of the chosen specs has an operation there.`);
}
