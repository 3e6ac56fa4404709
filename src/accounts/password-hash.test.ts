import t from 'tap';
import { hashPassword, parsePasswordHash, verifyPassword } from './password-hash.ts';

t.test('a hash describes itself and verifies only its own password', async (t) => {
  const hash = await hashPassword('c0rrect horse battery staple');
  t.match(hash, /^\$scrypt\$ln=14,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  t.notMatch(hash, /c0rrect/, 'the password is not in the hash');
  t.equal(await verifyPassword('c0rrect horse battery staple', hash), true);
  t.equal(await verifyPassword('c0rrect horse battery stapl', hash), false);
  t.equal(await verifyPassword('', hash), false);
});

t.test('the same password hashes differently each time (a fresh salt)', async (t) => {
  const [a, b] = await Promise.all([hashPassword('same'), hashPassword('same')]);
  t.not(a, b);
  t.equal(await verifyPassword('same', b), true);
});

t.test('equivalent Unicode forms of one password verify alike', async (t) => {
  const hash = await hashPassword('caf\u00e9');
  t.equal(await verifyPassword('cafe\u0301', hash), true);
});

t.test('other parameters in a stored hash still verify', async (t) => {
  const hash = await hashPassword('pw', { ln: 10, r: 4, p: 1 });
  t.match(hash, /^\$scrypt\$ln=10,r=4,p=1\$/);
  t.equal(await verifyPassword('pw', hash), true);
});

t.test('a malformed or forged hash never matches and never throws', async (t) => {
  const good = await hashPassword('pw');
  const forgedCost = good.replace('ln=14', 'ln=30');
  for (const bad of ['', 'pw', '$scrypt$', `${good.slice(0, -5)}!!!!!`, forgedCost, good.replace('$scrypt$', '$argon2id$')]) {
    t.equal(parsePasswordHash(bad), undefined, `refused: ${bad.slice(0, 30)}`);
    t.equal(await verifyPassword('pw', bad), false);
  }
});

t.test('a hash costs tens of milliseconds, not seconds: scrypt at 2^14 rounds of 8 blocks (16 MiB), one lane', async (t) => {
  // Its cost is fixed by its parameters, not by how busy the machine is: N * r * 128 bytes of memory, as much work.
  const parsed = parsePasswordHash(await hashPassword('cost'));
  t.same(parsed?.parameters, { ln: 14, r: 8, p: 1 });
  const memory = 2 ** parsed!.parameters.ln * parsed!.parameters.r * 128;
  t.ok(memory >= 8 * 2 ** 20 && memory <= 64 * 2 ** 20, `${memory / 2 ** 20} MiB per hash`);
});
