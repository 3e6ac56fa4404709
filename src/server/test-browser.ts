// Headless Chromium for tests (the Debian package, installed by scripts/system-packages.ts), driven by
// playwright-core: a fresh profile per launch, no background traffic, closed and removed at teardown.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why Chromium cannot run here (one line saying how to fix it), or undefined when it is installed. */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  return `Chromium is not installed at ${CHROMIUM_PATH}, so the reference pages cannot be checked in a browser: run \`node scripts/system-packages.ts\` (npm test does) or, as root, \`apt-get install -y chromium\`.`;
}

/** Starts Chromium with a fresh profile directory; both go when the test ends. */
export async function launchChromium(t: { teardown(fn: () => unknown): void }): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'portolan-chromium-'));
  t.teardown(() => rmSync(profile, { recursive: true, force: true }));
  // A persistent context is how playwright takes a profile directory (it refuses --user-data-dir in args).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  t.teardown(() => context.close());
  return context;
}
