// A diagnostics and login role for HTTP tests of one account's snapshots: logged in, one snapshot (the shipped
// sample's files) uploaded under the given file name and processed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestSystem } from '../../app/test-system.ts';
import { packFolder } from './engine/test-archive.ts';
import { snapshotsModule } from './module.ts';
import { SAMPLE_DIR } from './sample.ts';
import { MULTIPART, snapshotBody } from './test-snapshots-helpers.ts';

type Teardown = { teardown(fn: () => unknown): void };

const PASSWORD = 'gui page test pw';
export const API = '/snapshot-analyzer/api/snapshots';

/** Logs in as the administrative account at the login role; the cookies to send. */
export async function loggedIn(loginUrl: string): Promise<string> {
  const login = await fetch(`${loginUrl}/resource/loginAction.jsp`, {
    method: 'POST',
    body: new URLSearchParams({ userid: 'admin', passwd: PASSWORD }),
    redirect: 'manual',
  });
  if (login.status !== 302) throw new Error(`login answered ${login.status}`);
  return login.headers
    .getSetCookie()
    .map((c) => c.split(';', 1)[0])
    .join('; ');
}

/**
 * The diagnostics and login roles with one processed snapshot of the admin account, uploaded as `fileName`:
 * the system, the session cookies, the diagnostics URL and the snapshot's id.
 */
export async function systemWithSnapshot(t: Teardown, fileName = 'device.snapshot.tgz') {
  // This interface alone: the test does not depend on the others starting.
  const { system } = await startTestSystem(t, {
    config: { adminPassword: PASSWORD, roles: ['diagnostics', 'login'] },
    modules: [snapshotsModule],
  });
  const cookie = await loggedIn(system.url('login'));
  const diagnostics = system.url('diagnostics');
  const scratch = mkdtempSync(join(tmpdir(), 'portolan-gui-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  await packFolder(SAMPLE_DIR, join(scratch, 'device.tgz'));
  const upload = await fetch(`${diagnostics}${API}`, {
    method: 'POST',
    headers: { cookie, 'content-type': MULTIPART },
    body: new Uint8Array(snapshotBody(readFileSync(join(scratch, 'device.tgz')), fileName)),
    redirect: 'manual',
  });
  if (upload.status !== 302) throw new Error(`upload answered ${upload.status}`);
  const id = /\/(\d+)$/.exec(upload.headers.get('location') ?? '')![1]!;
  // Processing runs on a worker thread of the system: poll as clients do (a hang guard, not a speed check).
  for (let polls = 0; ; polls++) {
    const answer = await fetch(`${diagnostics}${API}/${id}`, { headers: { cookie } });
    if (answer.status === 200) break;
    if (answer.status !== 202 || polls > 3000) throw new Error(`snapshot ${id} answered ${answer.status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { system, cookie, diagnostics, id };
}
