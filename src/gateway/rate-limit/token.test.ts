import { createHash } from 'node:crypto';
import t from 'tap';
import { authorizationFields, counterKey, MAX_TOKEN_LENGTH, readBearerToken } from './token.ts';

const token = (value: string) => ({ kind: 'token', token: value });

t.test("the seed's form: the token is the second space-separated field of `Bearer <token>`", async (t) => {
  t.same(readBearerToken('Bearer abc.def-ghi'), token('abc.def-ghi'));
  t.same(readBearerToken('Bearer eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl'), token('eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl'), 'a JWT');
  t.same(readBearerToken('Bearer a+b/c~d_e=='), token('a+b/c~d_e=='), 'every b64token character, = at the end');
  t.same(readBearerToken('Bearer a=b!c'), token('a=b!c'), 'any visible character but a comma: the seed counts the second field as it is');
});

t.test('every spelling RFC 6750 accepts gives the same token', async (t) => {
  for (const header of [
    'bearer abc',
    'BEARER abc',
    'BeArEr abc',
    'Bearer  abc',
    'Bearer\tabc',
    'Bearer \t \tabc',
    ' Bearer abc',
    'Bearer abc ',
    ['Bearer abc'],
  ]) {
    t.same(readBearerToken(header), token('abc'), JSON.stringify(header));
  }
});

t.test('no bearer named anywhere: no token, not limited', async (t) => {
  // `bearer` in another case inside another scheme's credentials is not the seed's `Bearer` (a base64 may hold it).
  for (const header of [
    undefined,
    '',
    'Basic dXNlcjpwYXNz',
    'Basic YmVhcmVyOnB3',
    'Basic abearerb',
    'Token bearer',
    'Digest username="x"',
    [],
    ['Basic a', 'Basic b'],
  ]) {
    t.same(readBearerToken(header), { kind: 'none' }, JSON.stringify(header));
  }
});

t.test('bearer named but not one `Bearer <token>`: malformed, with a message that repeats nothing of it', async (t) => {
  const malformed = [
    'Basic x Bearer abc',
    'MyBearer abc',
    'Bearer',
    'Bearer abc extra',
    'Bearer abc, Bearer def',
    'Bearer abc,def',
    'Bearer\u00a0abc',
    'Bearer \u3000abc',
    'Bearerabc',
    'bearer',
    ['Basic x', 'Bearer abc'],
    ['Bearer abc', 'Bearer abc'],
  ];
  for (const header of malformed) {
    const reading = readBearerToken(header);
    t.equal(reading.kind, 'malformed', JSON.stringify(header));
    if (reading.kind === 'malformed') t.notMatch(reading.reason, /abc|def/, 'the header is not repeated');
  }
});

t.test('a token is bounded: one over the limit is malformed, checked without hashing it', async (t) => {
  t.same(readBearerToken(`Bearer ${'a'.repeat(MAX_TOKEN_LENGTH)}`), token('a'.repeat(MAX_TOKEN_LENGTH)));
  t.match(readBearerToken(`Bearer ${'a'.repeat(MAX_TOKEN_LENGTH + 1)}`), { kind: 'malformed', reason: /longer than 4096/ });
  t.equal(readBearerToken(`Bearer ${'a'.repeat(100_000)}!`).kind, 'malformed', 'a long run ending badly is read once, and refused');
});

t.test('every Authorization field of a raw header list, whatever the case of its name', async (t) => {
  t.equal(authorizationFields(['Host', 'x']), undefined);
  t.equal(authorizationFields(['Host', 'x', 'authorization', 'Bearer a']), 'Bearer a');
  t.same(authorizationFields(['AUTHORIZATION', 'Basic a', 'Host', 'x', 'Authorization', 'Bearer b', 'authorization', 'c']), [
    'Basic a',
    'Bearer b',
    'c',
  ]);
  t.equal(authorizationFields(['X-Authorization', 'Bearer a', 'Authorizatio', 'Bearer b']), undefined, 'only the exact name');
});

t.test('the counter key is the SHA-1 hex digest of the token', async (t) => {
  t.equal(counterKey('abc'), createHash('sha1').update('abc').digest('hex'));
  t.equal(counterKey('abc'), 'a9993e364706816aba3e25717850c26c9cd0d89d');
});
