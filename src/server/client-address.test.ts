import t from 'tap';
import { clientAddress, trustedProxies } from './client-address.ts';

t.test('a request through a trusted proxy comes from the last X-Forwarded-For address; from anyone else, from its peer', async (t) => {
  const trusted = trustedProxies(' 10.0.0.5, ::1 ');
  t.same([...trusted], ['10.0.0.5', '::1']);
  t.equal(clientAddress('10.0.0.5', '203.0.113.7, 198.51.100.2', trusted), '198.51.100.2', 'the entry the proxy appended');
  t.equal(clientAddress('::ffff:10.0.0.5', '198.51.100.2', trusted), '198.51.100.2', 'an IPv4 peer on a dual-stack socket');
  t.equal(clientAddress('::1', ['1.1.1.1', '2001:db8::7'], trusted), '2001:db8::7', 'the last of several fields');
  t.equal(clientAddress('192.0.2.9', '198.51.100.2', trusted), '192.0.2.9', 'a client that is no trusted proxy cannot choose its address');
  t.equal(clientAddress('10.0.0.5', undefined, trusted), '10.0.0.5', 'no header: the proxy itself');
  t.equal(clientAddress('10.0.0.5', '198.51.100.2, not an address', trusted), '10.0.0.5', 'a malformed last entry is not believed');
  t.equal(clientAddress('10.0.0.5', '198.51.100.2', trustedProxies('')), '10.0.0.5', 'nothing trusted by default');
  t.equal(clientAddress(undefined, '198.51.100.2', trusted), undefined);
});
