import t from 'tap';
import { isGatewayPageOrigin, isRegistrationRequest } from './registration-route.ts';

const route = { host: 'localhost:8080' };

t.test('only a POST with the configured Host is a registration request', async (t) => {
  t.ok(isRegistrationRequest(route, 'POST', 'localhost:8080'));
  t.ok(isRegistrationRequest(route, 'POST', 'LocalHost:8080'), 'host names are case-insensitive');
  t.notOk(isRegistrationRequest(route, 'GET', 'localhost:8080'), 'another method');
  t.notOk(isRegistrationRequest(route, 'PUT', 'localhost:8080'), 'another method');
  t.notOk(isRegistrationRequest(route, 'POST', 'localhost'), 'the port is part of the configured host');
  t.notOk(isRegistrationRequest(route, 'POST', '127.0.0.1:8080'), 'another host name');
  t.notOk(isRegistrationRequest(route, 'POST', undefined), 'no Host header');
});

t.test("only the gateway's own page is a page origin: its port, at the address the request came in on or a loopback name", async (t) => {
  t.ok(isGatewayPageOrigin('http://127.0.0.1:8080', '127.0.0.1', 8080));
  t.ok(isGatewayPageOrigin('http://localhost:8080', '127.0.0.1', 8080), 'a loopback name on a loopback connection');
  t.ok(isGatewayPageOrigin('http://[::1]:8080', '::1', 8080));
  t.ok(isGatewayPageOrigin('http://127.0.0.1:8080', '::ffff:127.0.0.1', 8080), 'an IPv4-mapped local address');
  t.ok(isGatewayPageOrigin('http://192.0.2.7:8080', '192.0.2.7', 8080), 'the address the request came in on');
  t.notOk(isGatewayPageOrigin('http://localhost:8080', '192.0.2.7', 8080), 'a loopback name on a connection from elsewhere');
  t.notOk(isGatewayPageOrigin('http://evil.example:8080', '127.0.0.1', 8080), 'another site on the same port');
  t.notOk(isGatewayPageOrigin('http://127.0.0.1:8081', '127.0.0.1', 8080), 'another port');
  t.notOk(isGatewayPageOrigin('https://127.0.0.1:8080', '127.0.0.1', 8080), 'another scheme');
  t.notOk(isGatewayPageOrigin('http://127.0.0.1:8080/docs', '127.0.0.1', 8080), 'not an origin');
  t.notOk(isGatewayPageOrigin('null', '127.0.0.1', 8080), 'an opaque origin');
  t.notOk(isGatewayPageOrigin(undefined, '127.0.0.1', 8080), 'no Origin');
  t.ok(isGatewayPageOrigin('http://127.0.0.1', '127.0.0.1', 80), 'port 80 is the default');
});
