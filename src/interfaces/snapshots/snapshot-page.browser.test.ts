// The record's gui_uri in headless Chromium: a browser that logged in at the login role opens the page and reads
// the findings; nothing loads from elsewhere, nothing runs, the policy blocks nothing the page needs, and the
// uploaded file name and a description written to attack it stay text.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { chromiumMissing, launchChromium } from '../../server/test-browser.ts';
import { API, systemWithSnapshot } from './test-gui-system.ts';

// A screenshot for a person to look at (.tap/ is ignored by git).
const SCREENSHOTS = fileURLToPath(new URL('../../../.tap/snapshot-page/', import.meta.url));
// Hang guards only (a page that never renders fails instead of waiting forever), not speed checks.
t.setTimeout(600_000);
const ACTION_TIMEOUT_MS = 120_000;
const HOSTILE_NAME = '<img src=x onerror=window.__xss=1>.tgz';
const HOSTILE_DESCRIPTION = '</title></style><script>window.__xss=2</script><svg onload="window.__xss=3">';

t.test("a logged-in browser opens the record's gui_uri and reads the findings, most important first", async (t) => {
  const missing = chromiumMissing();
  if (missing) {
    t.fail(missing);
    return;
  }
  const { cookie, diagnostics, id, system } = await systemWithSnapshot(t, HOSTILE_NAME);
  const described = await fetch(`${diagnostics}${API}/${id}`, {
    method: 'PUT',
    headers: { cookie, 'content-type': 'application/json', accept: 'application/vnd.vendor.diagnostics.api+json' },
    body: JSON.stringify({ description: HOSTILE_DESCRIPTION }),
  });
  const { gui_uri: guiUri } = (await described.json()) as { gui_uri: string };

  const context = await launchChromium(t);
  // The browser logs in itself, as a user's would: the login's cookies land in its own jar.
  const login = await context.request.post(`${system.url('login')}/resource/loginAction.jsp`, {
    form: { userid: 'admin', passwd: 'gui page test pw' },
    maxRedirects: 0,
  });
  t.equal(login.status(), 302, 'logged in');

  const page = await context.newPage();
  page.setDefaultTimeout(ACTION_TIMEOUT_MS);
  const origin = new URL(guiUri).origin;
  const offOrigin: string[] = [];
  const problems: string[] = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    offOrigin.push(url);
    return route.abort('blockedbyclient');
  });
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => problems.push(`script error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  await page.exposeFunction('reportViolation', (text: string) => void problems.push(`CSP violation: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { reportViolation(text: string): void }).reportViolation(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });

  const answer = await page.goto(guiUri);
  t.equal(answer?.status(), 200, 'the page answers');
  t.equal(await page.getByRole('heading', { level: 1 }).textContent(), `Snapshot ${id}: sample.example.com`);
  const hits = page.getByRole('table', { name: 'Hits, most important first' });
  const rows = await hits
    .locator('tbody tr')
    .evaluateAll((list) => list.map((row) => [row.querySelector('td')?.textContent ?? '', row.querySelector('th')?.textContent ?? '']));
  t.equal(rows.length, 10, "the sample's ten hits");
  t.same(rows[0], ['critical', 'A process crashed and left a core file'], 'the critical hit first');
  const rank = ['critical', 'high', 'medium', 'low'];
  t.ok(
    rows.every(([level], i) => i === 0 || rank.indexOf(level!) >= rank.indexOf(rows[i - 1]![0]!)),
    'then by importance',
  );
  t.equal(
    await page.getByRole('heading', { name: /^Findings: 10 of \d+ diagnostics hit$/ }).count(),
    1,
    'the findings are a named section',
  );
  t.match(await page.getByText('A pool has no members').count(), 1);
  const solution = page.getByRole('link', { name: /^https:\/\// }).first();
  t.equal(await solution.getAttribute('rel'), 'noopener noreferrer', 'solution articles are links, without a referrer');

  // The inline style is the one the policy allows by its hash: it applies, and nothing was blocked.
  t.equal(
    await hits
      .locator('td.importance')
      .first()
      .evaluate((cell) => getComputedStyle(cell).fontWeight),
    '700',
    'the page style applies',
  );
  t.match(await page.locator('dd').filter({ hasText: '.tgz' }).textContent(), HOSTILE_NAME, 'the file name is shown as written');
  t.match(await page.locator('dd').filter({ hasText: '__xss=2' }).textContent(), HOSTILE_DESCRIPTION, 'the description too');
  t.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined, 'none of it ran');
  t.equal(await page.evaluate(() => document.scripts.length + document.images.length), 0, 'no script, no image in the document');
  t.equal(await page.evaluate(() => document.documentElement.lang), 'en');

  mkdirSync(SCREENSHOTS, { recursive: true });
  writeFileSync(`${SCREENSHOTS}findings.png`, await page.screenshot({ fullPage: true }));
  t.same(offOrigin, [], 'the page asked nothing of another origin');
  t.same(problems, [], 'no dialog, script error or CSP violation');
});
