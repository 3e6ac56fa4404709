import t from 'tap';
import { connect } from 'node:net';
import { request as send } from 'undici';
import { startTestSystem } from '../app/test-system.ts';

// The gateway's stages on the one adapter: what the pool member answers early reaches the client at once.

t.test("a too-large body through the gateway gets the member's 413 at once, and the connection closes cleanly", async (t) => {
  // Before: the member answered 413 at once, the gateway logged 499 and the client waited for its own timeout.
  const { system } = await startTestSystem(t);
  const body = JSON.stringify({ name: 'x'.repeat(1_100_000) });
  const response = await send(`${system.url('gateway')}/api/charts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer t' },
    body,
  });
  t.equal(response.statusCode, 413);
  t.same(
    await response.body.json(),
    { status: 'error', message: 'The request body exceeds the limit of 1048576 bytes.' },
    "the member's answer, in the mapping shape",
  );
  t.equal(response.headers.connection, 'close');
  const after = await send(`${system.url('gateway')}/api/vessels`);
  t.equal(after.statusCode, 200, 'the gateway answers the next request');
  await after.body.dump();
});

t.test('a client still sending a large body receives the early answer whole, not a reset', async (t) => {
  const { system } = await startTestSystem(t);
  const { port } = new URL(system.url('gateway'));
  const received = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('close', () => resolve(text));
    socket.on('error', (error) => (text.includes('\r\n\r\n') ? resolve(text) : reject(error)));
    socket.write('POST /api/charts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3000000\r\n\r\n');
    // Keeps sending after the answer has come: the gateway reads and drops the rest before closing.
    let sent = 0;
    const more = () => {
      while (sent < 3_000_000) {
        sent += 65_536;
        if (!socket.write(Buffer.alloc(65_536, 'a'))) return void socket.once('drain', more);
      }
    };
    more();
  });
  t.match(received, /^HTTP\/1\.1 413 /);
  t.match(received, /\{"status":"error","message":"The request body exceeds the limit of 1048576 bytes\."\}$/, 'the whole answer arrived');
});
