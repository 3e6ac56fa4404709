import t from 'tap';
import { addressKey, parseAddress } from './address.ts';

t.test('addresses are taken apart: IP, route domain, prefix', async (t) => {
  t.same(parseAddress('10.0.0.1'), { ip: '10.0.0.1', family: 4, routeDomain: 0, prefix: 32 });
  t.same(parseAddress('10.0.10.10%2'), { ip: '10.0.10.10', family: 4, routeDomain: 2, prefix: 32 });
  t.same(parseAddress('fe80::1%3/64'), { ip: 'fe80::1', family: 6, routeDomain: 3, prefix: 64 });
  t.same(parseAddress('::ffff:10.0.0.1'), { ip: '::ffff:10.0.0.1', family: 6, routeDomain: 0, prefix: 128 });
  for (const bad of ['', '10.0.0', '10.0.0.256', '10.0.0.1/33', '::1/129', 'host', '10.0.0.1%', '10.0.0.1%x', '1::2::3', ':::'])
    t.equal(parseAddress(bad), undefined, JSON.stringify(bad));
});

t.test('one key per place however written', async (t) => {
  const key = (text: string) => addressKey(parseAddress(text)!);
  t.equal(key('::1'), key('0:0:0:0:0:0:0:1'));
  t.equal(key('2001:DB8::1'), key('2001:db8:0:0:0:0:0:1'));
  t.equal(key('::ffff:10.0.0.1'), key('::ffff:a00:1'));
  t.equal(key('10.0.0.1'), key('10.0.0.1%0/32'));
  t.not(key('10.0.0.1'), key('10.0.0.1%2'));
  t.not(key('10.0.0.1'), key('10.0.0.1/24'));
  t.equal(key('::ffff:127.0.0.1'), key('127.0.0.1'), 'an IPv4-mapped address is its IPv4 address');
  t.equal(key('0:0:0:0:0:ffff:7f00:1/128'), key('127.0.0.1/32'));
  t.not(key('::ffff:127.0.0.1/120'), key('127.0.0.1'));
  t.equal(key('::ffff:127.0.0.1/120'), key('127.0.0.1/24'), 'an IPv4-sized network of mapped addresses is that IPv4 network');
  t.notMatch(key('::ffff:127.0.0.1/64'), /\/-/, 'a shorter prefix is an IPv6 network, never a negative IPv4 prefix');
  t.not(key('::ffff:127.0.0.1/64'), key('127.0.0.1'));
});
