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
        .filter((op) => op.roles.includes(role))
        .map((op) => `${op.method.toUpperCase()} ${op.path} ${op.operationId}`)
        .sort();
      t.same(await shownOperations(page), expected, `${role} ${name}: every operation served on the role is listed`);
    }

    const links = await page.$$eval('nav.portolan-roles a', (list) => list.map((a) => [a.textContent, (a as HTMLAnchorElement).href]));
    const others = ROLE_NAMES.filter((r) => r !== role);
    t.same(
      links,
      others.map((r: RoleName) => [r, `${system.url(r)}/docs`]),
      `${role}: links every other role's /docs`,
    );
    const shown = await page.$$eval('nav.portolan-roles .role', (list) => list.map((item) => item.textContent));
    t.same(
      shown,
      ROLE_NAMES.map((r) => `${r} ${system.url(r)}`),
      `${role}: shows where every role runs (the ports in use)`,
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

type Guarded = { page: Page; prompts: string[]; offOrigin: string[]; requested: string[]; errors: string[] };

/**
 * A page that may reach only `origins`, watched through the DevTools protocol: every request is paused and
 * let through (or failed, off the origins); an authentication challenge the browser would answer with its
 * own login prompt is recorded in `prompts` (and cancelled). The browser raises it only for a request made
 * with credentials, so an empty `prompts` means no Basic prompt would have opened.
 */
async function watchedPage(context: Awaited<ReturnType<typeof launchChromium>>, origins: readonly string[]): Promise<Guarded> {
  const page = await context.newPage();
  page.setDefaultTimeout(ACTION_TIMEOUT_MS);
  const guarded: Guarded = { page, prompts: [], offOrigin: [], requested: [], errors: [] };
  const cdp = await context.newCDPSession(page);
  cdp.on('Fetch.requestPaused', (event) => {
    const url = event.request.url;
    if (!origins.includes(new URL(url).origin)) {
      guarded.offOrigin.push(url);
      void cdp.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByClient' });
      return;
    }
    guarded.requested.push(`${event.request.method} ${url}`);
    void cdp.send('Fetch.continueRequest', { requestId: event.requestId });
  });
  cdp.on('Fetch.authRequired', (event) => {
    guarded.prompts.push(`${event.authChallenge.scheme} ${event.request.url}`);
    void cdp.send('Fetch.continueWithAuth', { requestId: event.requestId, authChallengeResponse: { response: 'CancelAuth' } });
  });
  await cdp.send('Fetch.enable', { handleAuthRequests: true, patterns: [{ urlPattern: '*' }] });
  page.on('pageerror', (error) => guarded.errors.push(`script error: ${error.message}`));
  page.on('console', (message) => {
    // An answer with an error status is logged by the browser as a failed resource: it is the answer we expect.
    if (message.type() === 'error' && !/^Failed to load resource: the server responded with a status of/.test(message.text()))
      guarded.errors.push(`console error: ${message.text()}`);
  });
  return guarded;
}

/** Opens a role's page on one spec, as a user picks it in the selector. */
async function openSpec(guarded: Guarded, origin: string, role: RoleName, name: string) {
  const { page } = guarded;
  await page.goto(`${origin}/docs`);
  const spec = specsOfRole(role).find((s) => s.name === name)!;
  await page.selectOption('.topbar select', { label: `${spec.document.info.title} (${name})` });
  await page.waitForFunction(
    (title) => document.querySelector('.swagger-ui .info .title')?.textContent?.includes(title),
    spec.document.info.title,
  );
}

/** Opens an operation and presses "Try it out". */
async function tryOut(page: Page, operationId: string) {
  const operation = page.locator(`[id$="-${operationId}"]`);
  await operation.locator('.opblock-summary-control').click();
  await operation.locator('.try-out__btn').click();
  return operation;
}

/** Presses Execute (after clearing an earlier answer) and reads what the page shows: status, body, request URL, curl. */
async function execute(operation: ReturnType<Page['locator']>) {
  const clear = operation.locator('.btn-clear');
  if (await clear.count()) await clear.click();
  await operation.locator('.execute').click();
  const status = operation.locator('.live-responses-table tbody .response-col_status').first();
  await status.waitFor();
  return {
    status: (await status.textContent())?.trim(),
    // The answer's body; or what the page says instead when there was none (a failed fetch).
    body: (await (await bodyOf(operation)).textContent()) ?? '',
    url: (await operation.locator('.request-url pre').textContent())?.trim(),
    curl: (await operation.locator('.curl-command').textContent()) ?? '',
  };
}

/** Where the page shows the answer: its body, else the whole cell (a failed fetch shows a message there). */
async function bodyOf(operation: ReturnType<Page['locator']>) {
  const cell = operation.locator('.live-responses-table tbody .response-col_description').first();
  const body = cell.locator('pre');
  return (await body.count()) > 0 ? body.first() : cell;
}

/** Fills one scheme in the Authorize dialog, as a user does: open it, type the values, Authorize, Close. */
async function authorize(page: Page, scheme: string, values: readonly string[]) {
  await page.click('.auth-wrapper .authorize');
  const form = page.locator('.modal-ux .auth-container', { has: page.locator(`h4 code:text-is("${scheme}")`) });
  const inputs = form.locator('input');
  for (const [i, value] of values.entries()) await inputs.nth(i).fill(value);
  await form.locator('button.authorize').click();
  await form.locator('button.btn-done').click();
}

t.test(
  '"Try it out" on a freshly started system: one operation of every security scheme, through Authorize, with no browser login prompt',
  async (t) => {
    const missing = chromiumMissing();
    if (missing) return void t.fail(missing);
    let adminPassword = '';
    const { system, config } = await startTestSystem(t, { announce: (message) => (adminPassword = /: (\S+)\n/.exec(message)![1]!) });
    const context = await launchChromium(t);
    const admin = config.adminUser;
    const checked = async (t: Test, guarded: Guarded) => {
      t.same(guarded.prompts, [], 'the browser never raised its own login prompt');
      t.same(guarded.offOrigin, [], 'no request left the allowed origins');
      t.same(guarded.errors, [], 'no script error, console error or CSP violation');
      await guarded.page.close();
    };

    await t.test('Basic (device basicAuth): a 401 shown on the page, then 200 once authorized', async (t) => {
      const origin = system.url('device');
      const guarded = await watchedPage(context, [origin]);
      await openSpec(guarded, origin, 'device', 'device-config');
      const operation = await tryOut(guarded.page, 'getDeviceInfo');
      const refused = await execute(operation);
      t.equal(refused.status, '401', 'without credentials: the 401, on the page');
      await authorize(guarded.page, 'basicAuth', [admin, adminPassword]);
      const answered = await execute(operation);
      t.equal(answered.status, '200', 'with the administrative user');
      t.equal(answered.url, `${origin}/mgmt/shared/identified-devices/config/device-info`, 'sent to the device role');
      await checked(t, guarded);
    });

    await t.test('Basic (gateway adminBasic): the 401 shown on the page, no prompt', async (t) => {
      const origin = system.url('gateway');
      const guarded = await watchedPage(context, [origin]);
      await openSpec(guarded, origin, 'gateway', 'access-session');
      const refused = await execute(await tryOut(guarded.page, 'getAccessSession'));
      t.equal(refused.status, '401', 'without credentials: the 401, on the page');
      await checked(t, guarded);
    });

    await t.test('none, then the token header (central vendorAuthToken): log in on the page, authorize with the token', async (t) => {
      const origin = system.url('central');
      const guarded = await watchedPage(context, [origin]);
      await openSpec(guarded, origin, 'central', 'topology');
      const list = await tryOut(guarded.page, 'listManagedDevices');
      t.equal((await execute(list)).status, '401', 'without the token: the 401, on the page');
      const login = await tryOut(guarded.page, 'loginManagementUser');
      await login
        .locator('textarea.body-param__text')
        .fill(JSON.stringify({ username: admin, password: adminPassword, loginProviderName: 'tmos' }));
      const loggedIn = await execute(login);
      t.equal(loggedIn.status, '200', 'the login needs no credentials of its own');
      const token = (JSON.parse(loggedIn.body) as { token: { token: string } }).token.token;
      t.ok(token, 'the page shows the token');
      await authorize(guarded.page, 'vendorAuthToken', [token]);
      const answered = await execute(list);
      t.equal(answered.status, '200', 'with the token');
      t.match(answered.curl, 'X-Vendor-Auth-Token', 'sent in its header');
      await checked(t, guarded);
    });

    await t.test('Bearer (gateway bearerToken): any token, counted by the rate limiter', async (t) => {
      const origin = system.url('gateway');
      const guarded = await watchedPage(context, [origin]);
      await openSpec(guarded, origin, 'gateway', 'rate-limit');
      await authorize(guarded.page, 'bearerToken', ['a-token-typed-in-the-page']);
      const answered = await execute(await tryOut(guarded.page, 'getRateLimitStatus'));
      t.equal(answered.status, '200');
      t.match(answered.curl, 'Authorization: Bearer a-token-typed-in-the-page', 'sent as a bearer token');
      await checked(t, guarded);
    });

    await t.test("registration's own credentials: the form reaches the registration route at the registration host", async (t) => {
      await system.accounts.add(config.registrationAccessProfile, 'alice@example.com', 'correct-horse');
      const origin = system.url('gateway');
      const registrationOrigin = `http://${system.config.registrationHost}`;
      const guarded = await watchedPage(context, [origin, registrationOrigin]);
      await openSpec(guarded, origin, 'gateway', 'client-registration');
      const operation = await tryOut(guarded.page, 'registerClient');
      await operation.locator('[data-property-name="username"] input').fill('alice@example.com');
      await operation.locator('[data-property-name="password"] input').fill('wrong');
      const refused = await execute(operation);
      t.equal(refused.status, '403', 'a wrong password: refused by registration itself');
      t.match(refused.body, '"invalid user credentials"', "in registration's own shape (not the pool's 404)");
      t.equal(refused.url, `${registrationOrigin}${config.registrationPath}`, 'sent to the registration host');
      await operation.locator('[data-property-name="password"] input').fill('correct-horse');
      const registered = await execute(operation);
      t.equal(registered.status, '200', 'registered');
      t.match(JSON.parse(registered.body), { client_id: /^\w+$/, client_secret: /^\w+$/ }, 'a client id and secret');
      t.ok(
        guarded.requested.some((r) => r === `POST ${registrationOrigin}${config.registrationPath}`),
        'the browser posted to the registration host',
      );
      await checked(t, guarded);
    });

    await t.test(
      "the session cookie (diagnostics ssoSession): log in on the login role's page, then the diagnostics page sends the cookie",
      async (t) => {
        const login = system.url('login');
        const diagnostics = system.url('diagnostics');
        const guarded = await watchedPage(context, [login, diagnostics]);
        await openSpec(guarded, diagnostics, 'diagnostics', 'snapshots');
        const list = await tryOut(guarded.page, 'listSnapshots');
        const refused = await execute(list);
        t.equal(refused.status, '403', 'without a session: the 403, on the page');
        await openSpec(guarded, login, 'login', 'snapshots');
        const form = await tryOut(guarded.page, 'loginDiagnosticsUser');
        await form.locator('[data-property-name="userid"] input').fill(admin);
        await form.locator('[data-property-name="passwd"] input').fill(adminPassword);
        // The login's 302 leads to the diagnostics role, another origin the login page may not connect to: the page
        // shows "Failed to fetch" (its note says so) once the browser has stored the cookie.
        await form.locator('.execute').click();
        await form.locator('.live-responses-table tbody .response-col_description').waitFor();
        t.ok(guarded.requested.includes(`POST ${login}/resource/loginAction.jsp`), 'the login was posted to the login role');
        const blockedRedirect = new RegExp(`^console error: Connecting to '${diagnostics}/snapshot-analyzer/api/snapshots' violates`);
        guarded.errors.splice(0, guarded.errors.length, ...guarded.errors.filter((e) => !blockedRedirect.test(e)));
        await openSpec(guarded, diagnostics, 'diagnostics', 'snapshots');
        const again = await execute(await tryOut(guarded.page, 'listSnapshots'));
        t.equal(again.status, '200', 'with the session the login set');
        await checked(t, guarded);
      },
    );
  },
);
