import t from 'tap';
import { bindFailureReason, classifyAddress, listenPlan, mappedIPv4 } from './virtual-address.ts';

t.test('loopback addresses are bound on the virtual port plus the offset, route domain dropped', async (t) => {
  t.same(listenPlan('127.0.0.1', 80, 10_000), { bindable: true, host: '127.0.0.1', port: 10_080, url: 'http://127.0.0.1:10080' });
  t.same(listenPlan('127.0.0.1%2', 80, 10_000), { bindable: true, host: '127.0.0.1', port: 10_080, url: 'http://127.0.0.1:10080' });
  t.same(
    listenPlan('127.10.0.3', 443, 0),
    { bindable: true, host: '127.10.0.3', port: 443, url: 'http://127.10.0.3:443' },
    'all of 127.0.0.0/8',
  );
  t.same(listenPlan('::1%0', 8080, 1), { bindable: true, host: '::1', port: 8081, url: 'http://[::1]:8081' });
  t.equal(listenPlan('0:0:0:0:0:0:0:1', 80, 0).bindable, true, '::1 written out in full');
});

t.test('other addresses and ports past 65535 are kept but not bound, with the reason', async (t) => {
  t.match(listenPlan('10.0.1.10', 80, 10_000), { bindable: false, port: 10_080, reason: /not a loopback address/ });
  t.match(listenPlan('10.0.1.10%2', 80, 10_000), { bindable: false, reason: /not a loopback address/ });
  t.match(listenPlan('2001:db8::1', 80, 0), { bindable: false, reason: /not a loopback address/ });
  t.match(listenPlan('www.example.com', 80, 0), { bindable: false, reason: /not an IP address/ });
  t.match(listenPlan('127.0.0.1', 60_000, 10_000), {
    bindable: false,
    port: 70_000,
    reason: 'port 70000 (virtual port 60000 + offset 10000) is outside 1-65535',
  });
});

t.test('an IPv4-mapped address is its IPv4 address, in any spelling: bound as that when it is loopback', async (t) => {
  for (const written of ['::ffff:127.0.0.1', '::FFFF:7F00:1', '0:0:0:0:0:ffff:7f00:1', '0000:0000:0000:0000:0000:ffff:127.0.0.1']) {
    t.equal(mappedIPv4(written), '127.0.0.1', written);
    t.same(listenPlan(`${written}%1`, 80, 0), { bindable: true, host: '127.0.0.1', port: 80, url: 'http://127.0.0.1:80' }, `${written}%1`);
  }
  t.same(classifyAddress('::ffff:127.9.8.7/128'), { bindable: true, host: '127.9.8.7' });
  t.match(classifyAddress('::ffff:10.0.0.1'), { bindable: false, kind: 'not loopback' });
  t.match(classifyAddress('::ffff:127.0.0.1/32'), { bindable: false, kind: 'network' }, 'an IPv6 prefix, however short');
  for (const other of ['::127.0.0.1', '::ffff:0:127.0.0.1', '::7f00:1', '::', '0.0.0.0', '::ffff:0.0.0.0']) {
    t.match(classifyAddress(other), { bindable: false, kind: 'not loopback' }, `${other} is not loopback`);
  }
  t.match(classifyAddress('127.1'), { bindable: false, kind: 'not an address' }, 'no shorthand that getaddrinfo would take');
});

t.test('bind errors are told by their code', async (t) => {
  t.equal(bindFailureReason(Object.assign(new Error('x'), { code: 'EADDRINUSE' })), 'address in use');
  t.equal(bindFailureReason(Object.assign(new Error('x'), { code: 'EADDRNOTAVAIL' })), 'address not available');
  t.equal(bindFailureReason(Object.assign(new Error('x'), { code: 'EACCES' })), 'permission denied');
  t.equal(bindFailureReason(Object.assign(new Error('secret detail'), { code: 'EMFILE' })), 'cannot listen (EMFILE)');
});
