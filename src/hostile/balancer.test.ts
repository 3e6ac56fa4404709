// Hostile cases of a system behind a load balancer: every request arrives from the balancer's address.
import t from 'tap';
import { startTestSystem } from '../app/test-system.ts';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

t.test(
  "P-backoff-behind-balancer: one client's failed logins through a trusted balancer slow that client down, not the others behind it",
  async (t) => {
    const ADMIN_PASSWORD = 'balancer test admin pw';
    for (const trusted of [true, false]) {
      await t.test(trusted ? 'PORTOLAN_TRUSTED_PROXIES names the balancer' : 'no balancer trusted', async (t) => {
        const { system } = await startTestSystem(t, {
          config: { adminPassword: ADMIN_PASSWORD, trustedProxies: trusted ? '127.0.0.1' : '' },
        });
        const device = system.url('device');
        // The balancer (127.0.0.1 here) appends each client's address; a client may send its own entries first.
        const asAdmin = (password: string, client: string, user = 'admin') =>
          fetch(`${device}/mgmt/tm/traffic/rule`, {
            headers: { authorization: basic(user, password), 'x-forwarded-for': `198.51.100.99, ${client}` },
          }).then(async (r) => {
            await r.body?.cancel();
            return r.status;
          });
        // The guesser tries many names from one address: past its address budget, every name is refused there.
        for (let i = 0; i < 25; i++) await asAdmin('x', '203.0.113.66', `user${i}`);
        t.equal(await asAdmin(ADMIN_PASSWORD, '203.0.113.66'), 401, 'the guesser is backed off, even with the right password');
        t.equal(
          await asAdmin(ADMIN_PASSWORD, '192.0.2.10'),
          trusted ? 200 : 401,
          trusted ? 'another client behind the balancer logs in' : 'untrusted: every client behind the balancer is one address',
        );
      });
    }
  },
);
