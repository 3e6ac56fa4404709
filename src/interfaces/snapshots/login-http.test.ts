import t from 'tap';
import { loginOverHttp, startWiredSystem } from './test-login-http.ts';

t.test('the login server and the session scheme over real HTTP', (t) => loginOverHttp(t, startWiredSystem));
