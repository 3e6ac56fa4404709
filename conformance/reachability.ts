import { connect } from 'node:net';
import { withoutCredentials, type TargetMap } from './targets.ts';

/**
 * Before a run: is every base URL of the target there at all? One TCP connect per distinct URL,
 * bounded by the run's request timeout. A dead target is then one line per URL that cannot be
 * reached, instead of one connection error per request.
 */

/** A base URL that could not be reached: the roles or interfaces it serves, and why, in words. */
export type UnreachableTarget = { keys: string[]; url: string; code: string; reason: string };

/** Connects to host:port and closes; resolves to undefined when it connected, else the error's code (or message). */
export type Connector = (host: string, port: number, timeoutMs: number) => Promise<string | undefined>;

export const tcpConnect: Connector = (host, port, timeoutMs) =>
  new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      resolve('ETIMEDOUT');
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'the network is unreachable',
  ECONNRESET: 'the connection was reset',
};

/**
 * Tries each distinct base URL of `targets` once (several keys on one URL are tried once) and lists
 * those that cannot be reached.
 *
 * @example
 * const dead = await findUnreachable({ gateway: 'http://127.0.0.1:9' }, { timeoutMs: 10_000 });
 * for (const d of dead) console.error(unreachableLine(d));
 */
export async function findUnreachable(
  targets: TargetMap,
  options: { timeoutMs: number; connector?: Connector },
): Promise<UnreachableTarget[]> {
  const byUrl = [...Map.groupBy(Object.entries(targets), ([, url]) => url)];
  // All at once: six dead role URLs on a firewalled host take one timeout, not six. Listed in the targets' order.
  const probed = await Promise.all(
    byUrl.map(async ([url, entries]): Promise<UnreachableTarget | undefined> => {
      const { hostname, port, protocol } = new URL(url);
      const host = hostname.replace(/^\[(.*)\]$/, '$1');
      const code = await (options.connector ?? tcpConnect)(host, Number(port || (protocol === 'https:' ? 443 : 80)), options.timeoutMs);
      if (code === undefined) return undefined;
      const reason = code === 'ETIMEDOUT' ? `no connection within ${options.timeoutMs} ms` : (REASONS[code] ?? code);
      return { keys: entries.map(([key]) => key), url, code, reason };
    }),
  );
  return probed.filter((d) => d !== undefined);
}

/**
 * The one line for an unreachable URL (without the user and password it may carry), naming the option that set it:
 * `cannot reach gateway at http://127.0.0.1:9: connection refused — is it running? (set with --target gateway=<url>)`.
 */
export function unreachableLine(target: UnreachableTarget, option = '--target'): string {
  const every = target.keys.includes('*');
  const what = every ? 'the target' : target.keys.join(', ');
  const set = every ? `${option} <url>` : target.keys.map((k) => `${option} ${k}=<url>`).join(', ');
  const timeout = target.reason.startsWith('no connection within') ? ', or give it longer with --timeout <ms>' : '';
  const ask = target.code === 'ENOTFOUND' || target.code === 'EAI_AGAIN' ? 'is the host name right?' : 'is it running?';
  return `cannot reach ${what} at ${withoutCredentials(target.url)}: ${target.reason} — ${ask} (set with ${set}${timeout})`;
}
