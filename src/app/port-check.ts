// Before a start writes anything (migrations, a generated administrative password), the address and every
// role's port are tried: a port in use, two roles on one port or an address the machine does not have
// ends the start with one line naming the role, the port and the setting to change. The real listeners
// bind a moment later, so a port taken in between still fails there, with the same kind of line
// (listenFailure, used by system.ts and by the mocks).
import { createServer } from 'node:net';
import { portSettingOf } from '../lib/config.ts';
import type { RoleName } from '../lib/roles.ts';

/** A failure of a start a person can fix: its message is one line naming the setting. */
export class StartError extends Error {}

/**
 * The one line for a listener that cannot bind, by its error code; `fix` names what sets the port
 * (default: the role's PORTOLAN_<ROLE>_PORT setting), `hostFix` what sets the address.
 */
export function listenFailure(
  role: RoleName,
  host: string,
  port: number,
  code: string | undefined,
  fix = portSettingOf(role),
  hostFix = 'PORTOLAN_HOST',
): StartError {
  if (code === 'EADDRINUSE')
    return new StartError(
      `The ${role} role cannot listen on ${host}:${port}: the port is in use. Stop what uses it, or set ${fix} to another port (0 picks a free one).`,
    );
  if (code === 'EACCES')
    return new StartError(
      `The ${role} role may not listen on ${host}:${port} (ports below 1024 need privileges). Set ${fix} to a port above 1023.`,
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME')
    return new StartError(
      `The ${role} role cannot listen on ${host}: this machine has no such address. Set ${hostFix} to one of its addresses (127.0.0.1 or 0.0.0.0).`,
    );
  return new StartError(`The ${role} role cannot listen on ${host}:${port} (${code ?? 'unknown error'}). Check ${fix} and ${hostFix}.`);
}

/** Binds `host:port` and releases it; rejects with the error's code. */
function tryBind(host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * Rejects with the first StartError: two roles given the same port (checked before anything is bound),
 * then the address (bound once on a free port, so a wrong PORTOLAN_HOST is found even when every port is
 * 0), then each role's own port in turn.
 */
export async function checkPortsFree(host: string, ports: readonly { role: RoleName; port: number }[]): Promise<void> {
  const seen = new Map<number, RoleName>();
  for (const { role, port } of ports) {
    if (port === 0) continue;
    const other = seen.get(port);
    if (other)
      throw new StartError(`The ${other} and ${role} roles are both set to port ${port}. Set ${portSettingOf(role)} to another port.`);
    seen.set(port, role);
  }
  for (const { role, port } of [{ role: ports[0]?.role, port: 0 }, ...ports.filter((p) => p.port !== 0)]) {
    if (role === undefined) continue;
    await tryBind(host, port).catch((error: NodeJS.ErrnoException) => {
      throw listenFailure(role, host, port, error.code);
    });
  }
}
