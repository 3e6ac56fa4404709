import { createHash } from 'node:crypto';
import t from 'tap';
import { counterKey, extractToken } from './token.ts';

t.test('the token is the second space-separated field of a header containing Bearer', async (t) => {
  t.equal(extractToken('Bearer abc.def-ghi'), 'abc.def-ghi');
  t.equal(extractToken('Bearer abc extra fields'), 'abc', 'later fields are ignored');
  t.equal(extractToken('MyBearer tok'), 'tok', 'Bearer anywhere in the header (seed: "contains")');
  t.equal(extractToken('Basic Bearer'), 'Bearer', 'the second field, whatever the first');
  t.equal(extractToken(['Bearer first', 'Bearer second']), 'first', 'a repeated header counts as its first value');
});

t.test('no token: no Bearer, an empty or missing second field', async (t) => {
  for (const header of [undefined, '', 'Basic dXNlcjpwYXNz', 'bearer abc', 'BEARER abc', 'Bearer', 'Bearer ', 'Bearer  abc', []]) {
    t.equal(extractToken(header as string | string[] | undefined), undefined, JSON.stringify(header));
  }
  t.equal(extractToken(' Bearer abc'), 'Bearer', 'a leading space makes "Bearer" the second field: the seed rule, applied as written');
});

t.test('the counter key is the SHA-1 hex digest of the token', async (t) => {
  t.equal(counterKey('abc'), createHash('sha1').update('abc').digest('hex'));
  t.equal(counterKey('abc'), 'a9993e364706816aba3e25717850c26c9cd0d89d');
});
