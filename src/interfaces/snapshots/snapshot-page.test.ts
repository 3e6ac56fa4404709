// Over HTTP: the record's gui_uri is a page of its findings behind the session, and PUT takes the API's
// default format, XML, as well as JSON and a form (each checked against the spec, refusals in C's shape).
import t from 'tap';
import { API, systemWithSnapshot } from './test-gui-system.ts';

const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';
const LATEST = 'application/vnd.vendor.diagnostics.api';
const XSS_NAME = '<img src=x onerror=alert(1)>.tgz';

t.test("the record's gui_uri answers a page of the snapshot's findings, behind the same session", async (t) => {
  const { cookie, diagnostics, id } = await systemWithSnapshot(t, XSS_NAME);
  const record = (await (await fetch(`${diagnostics}${API}/${id}`, { headers: { cookie, accept: JSON_TYPE } })).json()) as {
    gui_uri: string;
  };
  t.equal(record.gui_uri, `${diagnostics}/snapshot-analyzer/gui/snapshots/${id}`);

  const page = await fetch(record.gui_uri, { headers: { cookie, accept: 'text/html,*/*;q=0.8' } });
  t.equal(page.status, 200);
  t.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
  t.match(page.headers.get('content-security-policy'), /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
  t.equal(page.headers.get('cache-control'), 'no-store');
  t.equal(page.headers.get('x-content-type-options'), 'nosniff');
  const text = await page.text();
  t.match(text, /<h2 id="findings">Findings: 10 of \d+ diagnostics hit<\/h2>/, "the sample's ten hits");
  t.match(text, 'A process crashed and left a core file');
  t.match(text, '&lt;img src=x onerror=alert(1)&gt;.tgz', 'the uploaded file name is shown as text');
  t.notMatch(text, /<img/i, 'never as markup');

  const noSession = await fetch(record.gui_uri);
  t.equal(noSession.status, 403, 'no session: 403 as the API');
  t.equal(noSession.headers.get('content-type'), 'application/vnd.vendor.diagnostics.api+xml');

  const missing = await fetch(`${diagnostics}/snapshot-analyzer/gui/snapshots/999999`, { headers: { cookie } });
  t.equal(missing.status, 404);
  t.match(await missing.text(), '<p>Snapshot 999999 was not found.</p>');
  t.equal(missing.headers.get('content-type'), 'text/html; charset=utf-8', 'a page too');

  const sample = await fetch(`${diagnostics}/snapshot-analyzer/gui/snapshots/0`, { headers: { cookie } });
  t.equal(sample.status, 200, 'the shared sample has its page');
});

t.test('PUT takes the description in XML, the default format (bare vendor type and +xml), JSON and a form', async (t) => {
  const { cookie, diagnostics, id } = await systemWithSnapshot(t);
  const put = (contentType: string, body: string) =>
    fetch(`${diagnostics}${API}/${id}`, { method: 'PUT', headers: { cookie, accept: JSON_TYPE, 'content-type': contentType }, body });

  const latest = await put(LATEST, '<snapshot><description>After the upgrade &amp; the reboot</description></snapshot>');
  t.equal(latest.status, 200, 'the bare vendor type is XML');
  t.match(await latest.json(), { id, description: 'After the upgrade & the reboot', visible_in_gui: true });

  const xml = await put(
    `${LATEST}+xml; charset=utf-8`,
    '<?xml version="1.0" encoding="UTF-8"?>\n<snapshot>\n  <support_case>C-1</support_case>\n  <visible_in_gui>false</visible_in_gui>\n</snapshot>\n',
  );
  t.equal(xml.status, 200);
  t.match(await xml.json(), { description: 'After the upgrade & the reboot', support_case: 'C-1', visible_in_gui: false });

  const again = await put(LATEST, '<snapshot><description>After the upgrade &amp; the reboot</description></snapshot>');
  const answer = await (await fetch(`${diagnostics}${API}/${id}`, { headers: { cookie } })).text();
  t.equal(again.status, 200, 'idempotent');
  t.match(answer, '<description>After the upgrade &amp; the reboot</description>', 'the record in XML says so');

  const form = await put('application/x-www-form-urlencoded', 'visible_in_gui=true&description=by+form');
  t.equal(form.status, 200, 'a form: visible_in_gui as text');
  t.match(await form.json(), { description: 'by form', visible_in_gui: true });
  const json = await put('application/json', JSON.stringify({ description: 'by JSON' }));
  t.match(await json.json(), { description: 'by JSON' });

  const sample = await fetch(`${diagnostics}${API}/0`, {
    method: 'PUT',
    headers: { cookie, 'content-type': LATEST },
    body: '<snapshot><description>mine</description></snapshot>',
  });
  t.equal(sample.status, 403, 'the sample stays read-only');
});

t.test('a PUT body that is not an update is 400 in C shape, the input never echoed', async (t) => {
  const { cookie, diagnostics, id } = await systemWithSnapshot(t);
  const put = (contentType: string, body: string, accept = JSON_TYPE) =>
    fetch(`${diagnostics}${API}/${id}`, { method: 'PUT', headers: { cookie, accept, 'content-type': contentType }, body });
  const refused: [string, string, string, RegExp][] = [
    [
      'not well-formed',
      LATEST,
      '<snapshot><description>secret-1</snapshot>',
      /^The request body is not well-formed XML \(line 1, column \d+\)\.$/,
    ],
    ['another root', LATEST, '<record><description>secret-1</description></record>', /one root element, <snapshot>/],
    [
      'an entity bomb',
      LATEST,
      '<!DOCTYPE s [<!ENTITY a "secret-1">]><snapshot><description>&a;</description></snapshot>',
      /document type declaration/,
    ],
    [
      'an unknown field',
      `${LATEST}+xml`,
      '<snapshot><hostname>secret-1</hostname></snapshot>',
      /^Invalid request: body must NOT have additional properties/,
    ],
    [
      'a nested element',
      LATEST,
      '<snapshot><description><b>secret-1</b></description></snapshot>',
      /^Invalid request: body\.description must be string/,
    ],
    ['no field', LATEST, '<snapshot/>', /^Invalid request: body must NOT have fewer than 1 properties/],
    [
      'a boolean that is not one',
      LATEST,
      '<snapshot><visible_in_gui>secret-1</visible_in_gui></snapshot>',
      /body\.visible_in_gui must be boolean/,
    ],
    [
      'too long',
      LATEST,
      `<snapshot><description>${'d'.repeat(1025)}</description></snapshot>`,
      /body\.description must NOT have more than 1024 characters/,
    ],
    ['JSON of another field', 'application/json', '{"hostname":"secret-1"}', /^Invalid request: body must NOT have additional properties/],
    ['no body', LATEST, '', /^Invalid request: request must have required property 'requestBody'/],
  ];
  for (const [what, type, body, message] of refused) {
    const answer = await put(type, body);
    const error = (await answer.json()) as { code: number; message: string };
    t.equal(answer.status, 400, `${what}: 400`);
    t.equal(error.code, 400, `${what}: C's {code, message}`);
    t.match(error.message, message, `${what}: ${error.message}`);
    t.notMatch(error.message, /secret-1/, `${what}: the input is not echoed`);
  }
  const asXml = await put(LATEST, '<snapshot>', 'application/vnd.vendor.diagnostics.api+xml');
  t.match(await asXml.text(), /^<error><code>400<\/code><message>The request body is not well-formed XML/, 'in XML when asked');
  const large = await put(LATEST, `<snapshot><description>${'d'.repeat(70_000)}</description></snapshot>`);
  t.equal(large.status, 413, 'over 64 KiB: 413');
  const other = await put('application/xml', '<snapshot><description>x</description></snapshot>');
  t.equal(other.status, 415, 'a media type the spec does not declare: 415');
  const record = (await (await fetch(`${diagnostics}${API}/${id}`, { headers: { cookie, accept: JSON_TYPE } })).json()) as {
    description: string;
  };
  t.equal(record.description, '', 'nothing was changed');
});
