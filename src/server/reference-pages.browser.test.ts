import t, { type Test } from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PNG } from 'pngjs';
import type { Page } from 'playwright-core';
import { ROLE_NAMES, type RoleName } from '../lib/roles.ts';
import { listOperations } from '../lib/spec-catalog.ts';
import { startTestSystem } from '../app/test-system.ts';
import { chromiumMissing, launchChromium } from './test-browser.ts';
import { specsOfRole } from './reference-test-helpers.ts';

// Screenshots for a person to look at (.tap/ is ignored by git).
const SCREENSHOTS = fileURLToPath(new URL('../../.tap/reference-pages/', import.meta.url));
// Hang guards only (a page that never renders fails instead of waiting forever), not speed checks.
t.setTimeout(600_000);
const ACTION_TIMEOUT_MS = 120_000;

/** A page that may reach only `origin`: anything else is aborted and listed; CSP violations and script errors too. */
async function guardedPage(context: Awaited<ReturnType<typeof launchChromium>>, origin: string) {
  const page = await context.newPage();
  page.setDefaultTimeout(ACTION_TIMEOUT_MS);
  const offOrigin: string[] = [];
  const requested: string[] = [];
  const errors: string[] = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin) {
      offOrigin.push(url);
      return route.abort('blockedbyclient');
    }
    requested.push(url);
    return route.continue();
  });
  page.on('pageerror', (error) => errors.push(`script error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console error: ${message.text()}`);
  });
  await page.exposeFunction('reportViolation', (text: string) => void errors.push(`CSP violation: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { reportViolation(text: string): void }).reportViolation(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  return { page, offOrigin, requested, errors };
}

/** Asserts the page asked nothing of another origin and had no error so far; false when it did. */
function stayedClean(t: Test, what: string, guards: { offOrigin: string[]; errors: string[] }): boolean {
  t.same(guards.offOrigin, [], `${what}: the page asked nothing of another origin (no CDN)`);
  t.same(guards.errors, [], `${what}: no script error, console error or CSP violation`);
  return guards.offOrigin.length === 0 && guards.errors.length === 0;
}

/** The operations Swagger UI shows: `METHOD /path operationId`, sorted. */
async function shownOperations(page: Page): Promise<string[]> {
  const shown = await page.$$eval('.opblock', (blocks) =>
    blocks.map((block) => {
      const method = block.querySelector('.opblock-summary-method')?.textContent ?? '?';
      const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '?';
      const operationId = block.querySelector('.opblock-summary-operation-id')?.textContent ?? '?';
      return `${method} ${path} ${operationId}`;
    }),
  );
  return shown.sort();
}

/** Share of pixels that differ from the most common colour (the background). */
function nonBackgroundShare(png: Buffer): number {
  const { data, width, height } = PNG.sync.read(png);
  const counts = new Map<number, number>();
  for (let i = 0; i < data.length; i += 4) {
    const colour = data.readUInt32BE(i);
    counts.set(colour, (counts.get(colour) ?? 0) + 1);
  }
  const background = Math.max(...counts.values());
  return 1 - background / (width * height);
}

/** The reference system and a browser, or undefined after failing the test when Chromium is missing (never a skip). */
async function systemAndBrowser(t: Test) {
  const missing = chromiumMissing();
  if (missing) {
    t.fail(missing);
    return undefined;
  }
  const { system } = await startTestSystem(t);
  return { system, context: await launchChromium(t) };
}

t.test("every role's /docs renders every operation of its specs in headless Chromium, from its own origin only", async (t) => {
  const started = await systemAndBrowser(t);
  if (!started) return;
  const { system, context } = started;
  mkdirSync(SCREENSHOTS, { recursive: true });

  for (const role of ROLE_NAMES) {
    const origin = system.url(role);
    const guards = await guardedPage(context, origin);
    const { page } = guards;
    // Loaded means every script and stylesheet was asked for: one from elsewhere fails here, not by a timeout below.
    await page.goto(`${origin}/docs`);
    if (!stayedClean(t, `${role} on load`, guards)) continue;
    // Swagger UI renders a spec's title and its operations in one pass.
    await page.waitForSelector('.swagger-ui .info .title');

    const screenshot = await page.screenshot();
    writeFileSync(`${SCREENSHOTS}${role}.png`, screenshot);
    const share = nonBackgroundShare(screenshot);
    t.ok(
      share > 0.15,
      `${role}: the screenshot is not blank (${Math.round(share * 100)}% of its pixels are not background; .tap/reference-pages/${role}.png)`,
    );

    const specs = specsOfRole(role);
    const options = await page.$$eval('.topbar select option', (list) => list.map((o) => o.textContent));
    t.same(
      options,
      specs.map(({ name, document }) => `${document.info.title} (${name})`),
      `${role}: the selector offers each of its specs`,
    );
    for (const { name, document: spec } of specs) {
      await page.selectOption('.topbar select', { label: `${spec.info.title} (${name})` });
      await page.waitForFunction(
        (title) => document.querySelector('.swagger-ui .info .title')?.textContent?.includes(title),
        spec.info.title,
      );
      const expected = listOperations(spec)
        .map((op) => `${op.method.toUpperCase()} ${op.path} ${op.operationId}`)
        .sort();
      t.same(await shownOperations(page), expected, `${role} ${name}: every operation is listed`);
    }

    const links = await page.$$eval('nav.portolan-roles a', (list) => list.map((a) => [a.textContent, (a as HTMLAnchorElement).href]));
    const others = ROLE_NAMES.filter((r) => r !== role);
    t.same(
      links,
      others.map((r: RoleName) => [r, `${system.url(r)}/docs`]),
      `${role}: links every other role's /docs`,
    );
    if (role === 'gateway') {
      for (const [, href] of links) t.equal((await fetch(href!)).status, 200, `the gateway's link ${href} is a page`);
    }

    stayedClean(t, role, guards);
    await page.close();
  }
});

t.test('"Try it out" on GET /health calls the role that served the page and shows its 200', async (t) => {
  const started = await systemAndBrowser(t);
  if (!started) return;
  const { system, context } = started;
  const origin = system.url('mapping');
  const guards = await guardedPage(context, origin);
  const { page, requested } = guards;
  await page.goto(`${origin}/docs`);
  if (!stayedClean(t, 'on load', guards)) return;
  const health = specsOfRole('mapping').find((s) => s.name === 'health')!;
  await page.selectOption('.topbar select', { label: `${health.document.info.title} (health)` });
  await page.click('[id$="-getHealth"] .opblock-summary-control');
  await page.click('[id$="-getHealth"] .try-out__btn');
  await page.click('[id$="-getHealth"] .execute');
  const status = await page.waitForSelector('[id$="-getHealth"] .live-responses-table tbody .response-col_status');
  t.equal((await status.textContent())?.trim(), '200', 'the response shown is a 200');
  t.equal(await page.textContent('[id$="-getHealth"] .request-url pre'), `${origin}/health`, 'the request went to the role itself');
  t.ok(requested.includes(`${origin}/health`), 'the browser called /health on the role');
  t.match(await page.textContent('[id$="-getHealth"] .live-responses-table tbody .response-col_description code'), /"status": "healthy"/);
  stayedClean(t, 'after the round trip', guards);
});
