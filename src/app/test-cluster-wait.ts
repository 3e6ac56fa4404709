// Test helper: waiting for the processes of a test cluster (test-cluster.ts), by polling what they answer.
import type { ManagedProcess } from './test-cluster-process.ts';

const POLL_MS = 100;
/** Only keeps a broken start from hanging the test: no assertion is timed. */
const GIVE_UP_MS = 90_000;

/**
 * Polls `ready` until it answers true; throws naming `what` (and `detail()`) after GIVE_UP_MS.
 *
 * @example await waitFor('mapping1 to answer /health', () => isHealthy(url));
 */
export async function waitFor(what: string, ready: () => Promise<boolean>, detail: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + GIVE_UP_MS; // wall-clock: only stops a start that never comes from hanging the test
  for (;;) {
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}${detail() ? `:\n${detail()}` : ''}`); // wall-clock: as above
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Resolves once the process answers 200 at `path`; throws with its output when it exits or never does. */
export async function healthy(node: { url: string; process: ManagedProcess }, path = '/health'): Promise<void> {
  let exited = false;
  void node.process.exited().then(() => (exited = true));
  await waitFor(
    `${node.process.name} (${node.url}) to answer 200 at ${path}`,
    async () => {
      if (exited) throw new Error(`${node.process.name} exited:\n${node.process.output()}`);
      const response = await fetch(`${node.url}${path}`, { signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      return response.status === 200;
    },
    () => node.process.output().slice(-2000),
  ).catch((error: Error) => {
    throw exited ? new Error(`${node.process.name} exited before it was healthy:\n${node.process.output().slice(-3000)}`) : error;
  });
}

/**
 * Each server's state by `<backend>/<server>` (`mapping_processes/mapping1`), from HAProxy's statistics page
 * (CSV): `UP` or `DOWN` once settled; while its checks are still going one way or the other `UP 1/2` or
 * `DOWN 1/2`, and `checking` before the first one ended.
 */
export async function haproxyServers(statsUrl: string): Promise<Map<string, string>> {
  const response = await fetch(`${statsUrl}/;csv`, { signal: AbortSignal.timeout(2000) });
  const lines = (await response.text()).split('\n');
  const header = lines[0]!.replace(/^# /, '').split(',');
  const at = (column: string) => header.indexOf(column);
  const [backend, name, status, check] = [at('pxname'), at('svname'), at('status'), at('check_status')];
  const states = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const cells = line.split(',');
    if (cells.length <= status || cells[name] === 'FRONTEND' || cells[name] === 'BACKEND') continue;
    const checked = cells[check] !== '' && !cells[check]!.startsWith('INI');
    states.set(`${cells[backend]}/${cells[name]}`, checked ? cells[status]! : 'checking');
  }
  return states;
}
