import { connect, createServer, type AddressInfo } from 'node:net';
import t from 'tap';
import type { TapTest } from '../lib/tap-test.ts';
import { startTcpProxy } from './test-tcp-proxy.ts';

/** An echo server on an ephemeral port, closed when the test ends. */
async function echoServer(t: TapTest): Promise<number> {
  const server = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** What the echo through `port` answers within `ms`: the echo, 'no answer', or the connection error code. */
function roundTrip(port: number, ms = 150): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('ping'));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('no answer');
    }, ms);
    socket.once('data', (data) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(data.toString());
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(error.code ?? error.message);
    });
  });
}

t.test('the proxy forwards, plays a hung or a stopped server, and forwards again when resumed', async (t) => {
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: await echoServer(t) });
  t.teardown(() => proxy.close());
  t.equal(await roundTrip(proxy.port), 'ping', 'forwards');

  await proxy.pause();
  t.equal(await roundTrip(proxy.port), 'no answer', 'hold: accepts and never answers');
  await proxy.pause('refuse');
  t.equal(await roundTrip(proxy.port), 'ECONNREFUSED', 'refuse: connecting fails at once');

  await proxy.resume();
  t.equal(await roundTrip(proxy.port), 'ping', 'forwards again, on the same port');
});

t.test('pausing cuts the connections that are open', async (t) => {
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: await echoServer(t) });
  t.teardown(() => proxy.close());
  const socket = connect(proxy.port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  const closed = new Promise((resolve) => socket.once('close', resolve));
  await proxy.pause();
  await closed;
  t.pass('the open connection was closed');
});
