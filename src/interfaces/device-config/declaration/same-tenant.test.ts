import t from 'tap';
import { isSameTenant } from './same-tenant.ts';
import { declarationOf } from './test-spec.ts';

t.test('the same tenant is the same whatever the order of its keys; arrays keep their order', async (t) => {
  const stored = declarationOf('keepBothServices').Sample_01;
  const shuffle = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(shuffle)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .reverse()
              .map(([k, v]) => [k, shuffle(v)]),
          )
        : value;
  t.ok(isSameTenant(stored, shuffle(stored)), 'keys in reverse order at every level');
  t.ok(isSameTenant(stored, structuredClone(stored)));
  const cases: [string, unknown, unknown, boolean][] = [
    ['scalars', 1, 1, true],
    ['number and string', 1, '1', false],
    ['null and object', null, {}, false],
    ['array order matters', ['10.0.0.1', '10.0.0.2'], ['10.0.0.2', '10.0.0.1'], false],
    ['array and object', [], {}, false],
    ['a key more', { a: 1 }, { a: 1, b: 2 }, false],
    ['a key less', { a: 1, b: 2 }, { a: 1 }, false],
    ['a key renamed', { a: 1 }, { b: 1 }, false],
    ['a nested change', { A: { s: { virtualPort: 80 } } }, { A: { s: { virtualPort: 81 } } }, false],
    ['an inherited name is no key', { toString: 1 }, {}, false],
    ['empty', {}, {}, true],
  ];
  for (const [name, a, b, same] of cases) {
    t.equal(isSameTenant(a, b), same, name);
    t.equal(isSameTenant(b, a), same, `${name} (swapped)`);
  }
});

t.test('two services instead of one is another tenant (the seed: one declaration holds all services)', async (t) => {
  t.notOk(isSameTenant(declarationOf('firstDeclaration').Sample_01, declarationOf('keepBothServices').Sample_01));
  t.notOk(isSameTenant(declarationOf('firstDeclaration').Sample_01, declarationOf('secondDeclarationReplaces').Sample_01));
});

t.test('deep values compare without recursion', async (t) => {
  const deep = (leaf: number) => {
    let value: unknown = leaf;
    for (let i = 0; i < 200_000; i++) value = { a: [value] };
    return value;
  };
  t.ok(isSameTenant(deep(1), deep(1)));
  t.notOk(isSameTenant(deep(1), deep(2)));
});
