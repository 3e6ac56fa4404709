import fc from 'fast-check';
import t from 'tap';
import { applyPatch, MAX_COPIED_VALUES, parsePointer } from './json-patch.ts';

const doc = () => ({ T: { class: 'Tenant', A: { class: 'Application', p: { members: [{ serverAddresses: ['10.0.0.1'] }] } } } });

t.test('pointers are RFC 6901: escapes read back, anything else refused', async (t) => {
  t.same(parsePointer(''), []);
  t.same(parsePointer('/a~1b/c~0d/'), ['a/b', 'c~d', '']);
  t.equal(parsePointer('a/b'), undefined, 'no leading slash');
  t.equal(parsePointer('/a~2'), undefined, 'a bad escape');
  t.equal(parsePointer('/a~'), undefined, 'a trailing tilde');
});

t.test('add, remove, replace, move and copy apply in order (RFC 6902)', async (t) => {
  const patched = applyPatch(doc(), [
    { op: 'add', path: '/T/A/p/members/0/serverAddresses/-', value: '10.0.0.2' },
    { op: 'add', path: '/T/A/p/members/0/serverAddresses/0', value: '10.0.0.0' },
    { op: 'replace', path: '/T/A/p/members/0/serverAddresses/1', value: '10.0.0.9' },
    { op: 'copy', from: '/T/A', path: '/T/B' },
    { op: 'remove', path: '/T/B/p/members/0/serverAddresses/2' },
    { op: 'move', from: '/T/B/p', path: '/T/B/q' },
    { op: 'add', path: '/T/label', value: 'patched' },
  ]);
  t.same(patched, {
    ok: true,
    document: {
      T: {
        class: 'Tenant',
        A: { class: 'Application', p: { members: [{ serverAddresses: ['10.0.0.0', '10.0.0.9', '10.0.0.2'] }] } },
        B: { class: 'Application', q: { members: [{ serverAddresses: ['10.0.0.0', '10.0.0.9'] }] } },
        label: 'patched',
      },
    },
  });
  t.same(applyPatch(doc(), [{ op: 'replace', path: '', value: { x: 1 } }]), { ok: true, document: { x: 1 } }, 'the root itself');
});

t.test('an operation that cannot apply fails the patch, naming its path', async (t) => {
  const cases: [string, object, string][] = [
    ['a missing parent', { op: 'add', path: '/Nope/A', value: 1 }, 'InvalidPatchOperationError: path /Nope/A does not exist'],
    ['removing what is not there', { op: 'remove', path: '/T/X' }, 'InvalidPatchOperationError: path /T/X does not exist'],
    ['replacing what is not there', { op: 'replace', path: '/T/X', value: 1 }, 'InvalidPatchOperationError: path /T/X does not exist'],
    [
      'an index past the end',
      { op: 'add', path: '/T/A/p/members/5', value: {} },
      'InvalidPatchOperationError: path /T/A/p/members/5 does not exist',
    ],
    [
      'an index with a leading zero',
      { op: 'remove', path: '/T/A/p/members/00' },
      'InvalidPatchOperationError: path /T/A/p/members/00 does not exist',
    ],
    [
      'a move into itself',
      { op: 'move', from: '/T/A', path: '/T/A/inner' },
      'InvalidPatchOperationError: /0: cannot move /T/A into itself',
    ],
    ['a copy without from', { op: 'copy', path: '/T/B' }, 'InvalidPatchOperationError: /0: copy needs from'],
    ['test', { op: 'test', path: '/T/class', value: 'Tenant' }, 'InvalidPatchOperationError: /0: op "test" is not supported'],
    ['not a pointer', { op: 'add', path: 'T', value: 1 }, 'InvalidPatchOperationError: /0: path "T" is not a JSON pointer'],
    ['too deep', { op: 'add', path: '/a'.repeat(65), value: 1 }, 'InvalidPatchOperationError: /0: a pointer deeper than 64 levels'],
  ];
  for (const [name, operation, message] of cases) t.same(applyPatch(doc(), [operation as never]), { ok: false, message }, name);
});

t.test('a member named __proto__ is a member: no prototype is ever set or followed', async (t) => {
  const patched = applyPatch(JSON.parse('{"T":{}}'), [
    { op: 'add', path: '/T/__proto__', value: { polluted: true } },
    { op: 'add', path: '/T/constructor', value: 'x' },
  ]);
  if (!patched.ok) return t.fail(patched.message);
  const tenant = (patched.document as { T: Record<string, unknown> }).T;
  t.same(Object.keys(tenant), ['__proto__', 'constructor']);
  t.equal(Object.getPrototypeOf(tenant), Object.prototype, 'the prototype is untouched');
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing leaked onto Object.prototype');
  t.same(applyPatch({ T: {} }, [{ op: 'remove', path: '/T/toString' }]).ok, false, 'an inherited name is not a member');
});

t.test('copies are bounded in all: doubling a subtree cannot run away', async (t) => {
  const operations = Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '/a', path: `/a/n${i}` }));
  const patched = applyPatch({ a: { v: [1, 2, 3] } }, operations);
  t.match(patched, { ok: false, message: `InvalidPatchOperationError: /15: the patch copies more than ${MAX_COPIED_VALUES} values` });
});

t.test('a long list copies or is refused, never overflowing the stack', async (t) => {
  // Past about 130 000 values, a list spread into one call's arguments throws RangeError.
  const copy = (length: number) =>
    applyPatch({ class: 'ADC' }, [
      { op: 'add', path: '/T', value: Array<number>(length).fill(0) },
      { op: 'copy', from: '/T', path: '/U' },
    ]);
  const copied = copy(150_000);
  t.ok(copied.ok && (copied.document as { U: number[] }).U.length === 150_000, 'under the bound: copied');
  t.same(copy(500_000), { ok: false, message: `InvalidPatchOperationError: /1: the patch copies more than ${MAX_COPIED_VALUES} values` });
  const wide = Object.fromEntries(Array.from({ length: 150_000 }, (_, i) => [`m${i}`, i]));
  t.ok(applyPatch({ T: wide }, [{ op: 'copy', from: '/T', path: '/U' }]).ok, 'a wide object too');
});

t.test('never throws, whatever the operations (property)', async () => {
  const pointer = fc
    .array(fc.constantFrom('T', 'A', 'p', 'members', '0', '1', '-', '__proto__', '~0', '~1', '~2', ''), { maxLength: 6 })
    .map((tokens) => tokens.map((x) => `/${x}`).join(''));
  const op = fc.record({
    op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'nope'),
    path: pointer,
    from: pointer,
    value: fc.jsonValue(),
  });
  fc.assert(
    fc.property(fc.array(op, { maxLength: 12 }), (operations) => void applyPatch(doc(), operations)),
    { numRuns: 300 },
  );
});
