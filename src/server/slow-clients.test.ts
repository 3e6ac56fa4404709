import t from 'tap';
import { connect } from 'node:net';
import { startTestSystem } from '../app/test-system.ts';
import { waitFor } from '../traffic/test-servers.ts';

// A client trickling a body holds its socket only until the body deadline, on the test's fake clock.
// (Before: a trickled body held its socket for Node's request timeout, about 5 minutes, then got an
// empty `400 Bad Request`.) The 408 is declared (designed) on every operation that reads its body whole.
t.test('a body that does not arrive within PORTOLAN_BODY_TIMEOUT_MS gets 408 in the interface shape', async (t) => {
  const { system, clock } = await startTestSystem(t, { fakeTimers: true });
  const socket = connect(Number(new URL(system.url('mapping')).port), '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  const closed = new Promise((resolve) => socket.on('close', resolve));
  socket.write('POST /api/charts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":');
  t.ok(await waitFor(() => clock.pendingTimers().includes(30_000)), 'the server is reading the body, its deadline set');
  clock.advance(29_999);
  t.equal(received, '', 'nothing yet 1 ms before the deadline');
  clock.advance(1);
  // The 408 goes out at once; the close waits for the rest of the body up to the linger time (5 s).
  t.ok(await waitFor(() => received.includes('}')), 'answered at the deadline');
  await clock.advanceAsync(5000);
  await closed;
  t.match(received, /^HTTP\/1\.1 408 /);
  t.match(received, /connection: close/i);
  t.match(received, /\{"status":"error","message":"The request body did not arrive within 30000 ms\."\}$/);
});
