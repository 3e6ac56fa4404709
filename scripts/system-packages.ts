// System (Debian) packages that some tests need and npm cannot install: each is installed with apt-get
// when its command is missing. `npm test` runs this before tap (scripts/test.ts); a fresh machine or
// CI thus gets them, and a test that needs one fails with a clear message when it still is missing.
// Usage: node scripts/system-packages.ts (exit 1 when a package is missing and could not be installed).
import { spawnSync } from 'node:child_process';

type SystemPackage = { command: string; versionFlag: string; debian: string; why: string };

export const SYSTEM_PACKAGES: readonly SystemPackage[] = [
  {
    command: 'pdftoppm',
    versionFlag: '-v',
    debian: 'poppler-utils',
    why: 'renders the diagnostics PDF to PNG in src/interfaces/snapshots/formats/pdf.test.ts',
  },
  {
    command: 'chromium',
    versionFlag: '--version',
    debian: 'chromium',
    why: "renders every role's /docs reference page in src/server/reference-pages.browser.test.ts",
  },
  {
    command: 'haproxy',
    versionFlag: '-v',
    debian: 'haproxy',
    why: 'balances two processes of every role in src/app/scale-out.test.ts, and checks the configuration `portolan haproxy-config` writes',
  },
];

/** Whether `command` can be run (any exit status: only "not found" counts as missing). */
export const hasCommand = (command: string, versionFlag: string): boolean =>
  spawnSync(command, [versionFlag], { stdio: 'ignore' }).error === undefined;

const run = (args: string[]) =>
  spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });

function install(pkg: SystemPackage): boolean {
  console.log(
    `system-packages: ${pkg.command} is missing; installing Debian package ${pkg.debian} (apt-get install -y --no-install-recommends ${pkg.debian}), it ${pkg.why}`,
  );
  const args = ['install', '-y', '--no-install-recommends', pkg.debian];
  let result = run(args);
  // A fresh machine may have no package lists yet: fetch them once and try again.
  if (result.status !== 0 && !result.error) {
    console.log('system-packages: apt-get install failed; running apt-get update and trying once more');
    if (run(['update']).status === 0) result = run(args);
  }
  if (hasCommand(pkg.command, pkg.versionFlag)) return true;
  const cause = result.error ? `apt-get could not be started (${result.error.message})` : `apt-get exited with status ${result.status}`;
  console.log(
    `system-packages: could not install ${pkg.debian}: ${cause}. Install it by hand (as root: apt-get install ${pkg.debian}); until then the test that needs it fails (it ${pkg.why}).`,
  );
  return false;
}

if (import.meta.main) {
  const missing = SYSTEM_PACKAGES.filter((pkg) => !hasCommand(pkg.command, pkg.versionFlag));
  const failed = missing.filter((pkg) => !install(pkg));
  process.exitCode = failed.length > 0 ? 1 : 0;
}
