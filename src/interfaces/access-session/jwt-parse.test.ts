import t from 'tap';
import fc from 'fast-check';
import { padPart } from './base64-part.ts';
import { parseIdentityToken, splitMembers } from './jwt-parse.ts';
import { EXAMPLE_PARSED, EXAMPLE_TOKEN } from './spec-examples.ts';

const OPTIONS = { maxTokenLength: 16384 };
const parse = (token: string) => parseIdentityToken(token, OPTIONS);
const b64url = (text: string | Buffer) => Buffer.from(text).toString('base64url');
const HEADER = b64url('{"alg":"none"}');
const SIG = 'c2ln';
const tokenWith = (payloadText: string) => `${HEADER}.${b64url(payloadText)}.${SIG}`;
const payloadVariables = (outcome: ReturnType<typeof parse>) => {
  if (!outcome.ok) throw new Error(`expected success, got: ${outcome.message}`);
  const prefix = 'session.oauth.jwt.payload.last.';
  return Object.fromEntries(
    Object.entries(outcome.variables)
      .filter(([k]) => k.startsWith(prefix))
      .map(([k, v]) => [k.slice(prefix.length), v]),
  );
};

t.test('the spec example token gives exactly the spec example variables', async (t) => {
  const outcome = parse(EXAMPLE_TOKEN);
  t.same(outcome, { ok: true, variables: EXAMPLE_PARSED });
  const [header, payload] = EXAMPLE_TOKEN.split('.');
  t.equal(header!.length % 4, 2, 'the example header needs == padding');
  t.equal(payload!.length % 4, 3, 'the example payload needs = padding');
});

t.test('padding follows the seed: == when the length is 2 mod 4, = when 3 mod 4, none when 0', async (t) => {
  const cases = [
    { text: '{"k":"v12"}', remainder: 3, padding: '=' }, // 11 bytes
    { text: '{"k":"v123"}', remainder: 0, padding: '' }, // 12 bytes
    { text: '{"k":"v1234"}', remainder: 2, padding: '==' }, // 13 bytes
  ];
  for (const { text, remainder, padding } of cases) {
    const part = b64url(text);
    t.equal(part.length % 4, remainder, `${text} encodes to a length of ${remainder} mod 4`);
    t.equal(padPart(part), `${part}${padding}`, `padded with '${padding}'`);
    t.same(payloadVariables(parse(tokenWith(text))), { k: text.slice(6, -2) });
  }
});

t.test('the three raw parts are kept as sent and the signature is not validated', async (t) => {
  const payload = b64url('{"sub":"a"}');
  const outcome = parse(`${HEADER}.${payload}.not*base64 at all!`);
  t.same(outcome, {
    ok: true,
    variables: {
      'session.oauth.jwt.last.header': HEADER,
      'session.oauth.jwt.last.payload': payload,
      'session.oauth.jwt.last.signature': 'not*base64 at all!',
      'session.oauth.jwt.header.last.alg': 'none',
      'session.oauth.jwt.payload.last.sub': 'a',
    },
  });
  t.same(parse(`${HEADER}.${payload}.`).ok, true, 'an empty signature (an unsecured token) is accepted');
});

t.test('malformed tokens fail with a message naming the part and the reason, never the token', async (t) => {
  const payload = b64url('{"sub":"someone-who-must-not-leak"}');
  const star = `${payload.slice(0, 17)}*${payload.slice(18)}`;
  const cases: Array<[string, string, string]> = [
    ['one part', 'eyJhbGciOiJub25lIn0', 'session.oauth.client.last.id_token has 1 dot-separated part; 3 expected'],
    ['two parts', `${HEADER}.${payload}`, 'session.oauth.client.last.id_token has 2 dot-separated parts; 3 expected'],
    ['five parts (an encrypted token)', `${HEADER}.a.b.c.d`, 'session.oauth.client.last.id_token has 5 dot-separated parts; 3 expected'],
    ['an empty token', '', 'session.oauth.client.last.id_token has 1 dot-separated part; 3 expected'],
    ['a header of length 1 mod 4', `${'A'.repeat(21)}.${payload}.${SIG}`, 'header part is not valid base64url: length 21 is 1 mod 4'],
    [
      'a payload of length 1 mod 4',
      `${HEADER}.${b64url('{"k":"v123"}')}x.${SIG}`,
      'payload part is not valid base64url: length 17 is 1 mod 4',
    ],
    [
      'a character outside the alphabet',
      `${HEADER}.${star}.${SIG}`,
      "payload part is not valid base64url: invalid character '*' at position 17",
    ],
    [
      'a space',
      `${HEADER}.${payload.slice(0, 4)} ${payload.slice(5)}.${SIG}`,
      'payload part is not valid base64url: invalid character U+0020 at position 4',
    ],
    ['a newline', `eyJh\nbGciOiJub25lIn0.${payload}.${SIG}`, 'header part is not valid base64url: invalid character U+000A at position 4'],
    [
      'a non-ASCII letter',
      `${HEADER}.é${payload.slice(1)}.${SIG}`,
      'payload part is not valid base64url: invalid character U+00E9 at position 0',
    ],
    [
      'padding inside a part',
      `${HEADER}.${payload.slice(0, 8)}=${payload.slice(9)}.${SIG}`,
      "payload part is not valid base64url: invalid character '=' at position 8",
    ],
    [
      'too much padding',
      `${HEADER}.${b64url('{"k":"v123"}')}==.${SIG}`,
      'payload part is not valid base64url: too much padding at position 16',
    ],
    [
      'bytes that are not UTF-8',
      `${b64url(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))}.${payload}.${SIG}`,
      'header part is not valid UTF-8 once base64-decoded',
    ],
  ];
  for (const [name, token, message] of cases) {
    const outcome = parse(token);
    t.same(outcome, { ok: false, message }, name);
    for (const part of token.split('.').filter((p) => p.length > 4)) {
      t.notOk(!outcome.ok && outcome.message.includes(part), `${name}: the message does not repeat a part of the token`);
    }
  }
});

t.test('a token longer than the limit is refused; one exactly at the limit is parsed', async (t) => {
  const base = tokenWith('{"sub":"a"}');
  const atLimit = `${base}${'s'.repeat(16384 - base.length)}`;
  t.equal(atLimit.length, 16384);
  t.equal(parse(atLimit).ok, true, 'exactly 16384 characters is accepted');
  t.same(parse(`${atLimit}s`), { ok: false, message: 'session.oauth.client.last.id_token is 16385 characters long; the limit is 16384' });
  t.same(
    parseIdentityToken(base, { maxTokenLength: 10 }),
    { ok: false, message: `session.oauth.client.last.id_token is ${base.length} characters long; the limit is 10` },
    'the limit is the setting',
  );
});

t.test('an already padded part (standard base64) is accepted', async (t) => {
  const text = '{"k":"v1234"}';
  t.same(payloadVariables(parse(`${HEADER}.${Buffer.from(text).toString('base64')}.${SIG}`)), { k: 'v1234' });
});

t.test('the standard and the url-safe alphabet give the same variables', async (t) => {
  const text = '{"k":"~~~???>>>","n":"ÿÿ"}';
  const standard = Buffer.from(text).toString('base64').replace(/=+$/, '');
  const urlSafe = b64url(text);
  t.match(standard, /[+/]/, 'the standard encoding uses + or /');
  t.match(urlSafe, /[-_]/, 'the url-safe encoding uses - or _');
  t.same(payloadVariables(parse(`${HEADER}.${standard}.${SIG}`)), { k: '~~~???>>>', n: 'ÿÿ' });
  t.same(parse(`${HEADER}.${standard}.${SIG}`).ok && payloadVariables(parse(`${HEADER}.${urlSafe}.${SIG}`)), { k: '~~~???>>>', n: 'ÿÿ' });
});

t.test('members split at the first colon only, without trimming', async (t) => {
  t.same(payloadVariables(parse(tokenWith('{"iss":"https://login.example.com:8443/v2.0","t":"a:b:c"}'))), {
    iss: 'https://login.example.com:8443/v2.0',
    t: 'a:b:c',
  });
  t.same(payloadVariables(parse(tokenWith('{ "a": " b " , "c":1}'))), { ' a': '  b  ', ' c': '1' }, 'spaces stay where they were');
});

t.test('a member without a colon has an empty value; empty members are skipped', async (t) => {
  t.same(payloadVariables(parse(tokenWith('{"a":"1",lonely,"b":"2"}'))), { a: '1', lonely: '', b: '2' });
  t.same(payloadVariables(parse(tokenWith('{"a":"1",,"b":"2",}'))), { a: '1', b: '2' });
  t.same(payloadVariables(parse(tokenWith('{}'))), {}, 'an empty object sets no member variable');
  t.same(payloadVariables(parse(tokenWith(''))), {}, 'an empty payload sets no member variable');
});

t.test('nested values are flattened by the text rules, and a later member of the same name wins', async (t) => {
  t.same(payloadVariables(parse(tokenWith('{"amr":["pwd","mfa"],"cnf":{"kid":"k1"},"x":"first","x":"second"}'))), {
    amr: 'pwd',
    mfa: '',
    cnf: 'kid:k1',
    x: 'second',
  });
  t.same(splitMembers('{"__proto__":"p","constructor":"c"}'), [
    ['__proto__', 'p'],
    ['constructor', 'c'],
  ]);
  const outcome = parse(tokenWith('{"__proto__":"p"}'));
  t.equal(
    outcome.ok && Object.getOwnPropertyDescriptor(outcome.variables, 'session.oauth.jwt.payload.last.__proto__')?.value,
    'p',
    'a member named __proto__ is only a name',
  );
});

t.test('property: every member of a flat JSON object comes back as payload.last.<key> = String(value)', async (t) => {
  const plain = fc.string({ unit: 'binary', maxLength: 16 }).filter((s) => !/[{}[\]",:\\\u0000-\u001f]/.test(s));
  const value = fc.oneof(plain, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean());
  let runs = 0;
  fc.assert(
    fc.property(fc.dictionary(plain, value, { maxKeys: 8 }), (object) => {
      runs++;
      const expected = Object.fromEntries(Object.entries(object).map(([k, v]) => [k, String(v)]));
      const got = payloadVariables(parse(tokenWith(JSON.stringify(object))));
      if (JSON.stringify(Object.entries(got).sort()) !== JSON.stringify(Object.entries(expected).sort())) {
        throw new Error(`mismatch: ${JSON.stringify({ object, got })}`);
      }
    }),
    { seed: 1715679000, numRuns: 300 },
  );
  t.equal(runs, 300, 'the property ran 300 times');
});
