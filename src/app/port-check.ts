// Before a start writes anything (migrations, a generated administrative password), every role's port is
// tried: a port in use or an address the machine does not have ends the start with one line naming the
// role, the port and the setting to change. The real listeners bind a moment later, so a port taken in
// between still fails there, with the same kind of line (StartError from system.ts).
import { createServer } from 'node:net';
import type { RoleName } from '../lib/roles.ts';

/** A failure of a start a person can fix: its message is one line naming the setting. */
export class StartError extends Error {}

/** The one line for a listener that cannot bind, by its error code. */
export function listenFailure(role: RoleName, host: string, port: number, code: string | undefined): StartError {
  const setting = `PORTOLAN_${role.toUpperCase()}_PORT`;
  if (code === 'EADDRINUSE') return new StartError(`The ${role} role cannot listen on ${host}:${port}: the port is in use. Stop what uses it, or set ${setting} to another port (0 picks a free one).`);
  if (code === 'EACCES') return new StartError(`The ${role} role may not listen on ${host}:${port} (ports below 1024 need privileges). Set ${setting} to a port above 1023.`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new StartError(`The ${role} role cannot listen on ${host}: this machine has no such address. Set PORTOLAN_HOST to one of its addresses (127.0.0.1 or 0.0.0.0).`);
  return new StartError(`The ${role} role cannot listen on ${host}:${port} (${code ?? 'unknown error'}). Check ${setting} and PORTOLAN_HOST.`);
}

/**
 * Binds and releases each role's port in turn (0: nothing to check); rejects with the first StartError.
 * Two roles given the same port are caught here too.
 */
export async function checkPortsFree(host: string, ports: readonly { role: RoleName; port: number }[]): Promise<void> {
  const seen = new Map<number, RoleName>();
  for (const { role, port } of ports) {
    if (port === 0) continue;
    const other = seen.get(port);
    if (other) throw new StartError(`The ${other} and ${role} roles are both set to port ${port}. Set PORTOLAN_${role.toUpperCase()}_PORT to another port.`);
    seen.set(port, role);
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', (error: NodeJS.ErrnoException) => reject(listenFailure(role, host, port, error.code)));
      probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
    });
  }
}
