import t from 'tap';
import fc from 'fast-check';
import { fingerprintOf } from './fingerprint.ts';
import { isSameTenant } from './same-tenant.ts';

t.test('two declarations have one fingerprint exactly when they are the same tenant', async (t) => {
  t.equal(fingerprintOf({ a: 1, b: [1, { c: 'x' }] }), fingerprintOf({ b: [1, { c: 'x' }], a: 1 }), 'the order of keys does not count');
  t.not(fingerprintOf({ a: [1, 2] }), fingerprintOf({ a: [2, 1] }), 'the order of a list does');
  t.not(fingerprintOf({ a: '1' }), fingerprintOf({ a: 1 }));
  t.not(fingerprintOf({ 'a":1,"b': 2 }), fingerprintOf({ a: 1, b: 2 }), 'keys cannot be confused with structure');
  const json = fc.jsonValue({ maxDepth: 4 });
  fc.assert(
    fc.property(json, json, (a, b) => (fingerprintOf(a) === fingerprintOf(b)) === isSameTenant(a, b)),
    { seed: 20, numRuns: 500 },
  );
  fc.assert(
    fc.property(json, (a) => fingerprintOf(a) === fingerprintOf(structuredClone(a))),
    { seed: 21, numRuns: 200 },
  );
});
