import t from 'tap';
import { isRegistrationRequest } from './registration-route.ts';

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
