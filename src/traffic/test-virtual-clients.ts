// Test helpers for virtual servers and the data plane: a client that tells a refused connection
// apart, a member that holds its answers until released, and free ports.
import { request, type Agent, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import { findFreePorts } from '../lib/free-ports.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { startHttpMember, waitFor } from './test-servers.ts';

export type Through = { status: number; headers: IncomingHttpHeaders; body: string; reusedSocket: boolean };

/**
 * One request to 127.0.0.1:port; 'refused' when nothing listens. Without an `agent` it goes on its
 * own connection, closed after the answer.
 */
export function through(
  port: number,
  options: { method?: string; path?: string; headers?: OutgoingHttpHeaders; body?: string; agent?: Agent } = {},
): Promise<Through | 'refused'> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: options.headers,
        agent: options.agent ?? false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, reusedSocket: req.reusedSocket }));
        res.on('error', reject);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNREFUSED' ? resolve('refused') : reject(error)));
    req.end(options.body);
  });
}

/** The body of an answer through `port`, or 'refused'. */
export async function bodyThrough(port: number, options: Parameters<typeof through>[1] = {}): Promise<string> {
  const answer = await through(port, options);
  return answer === 'refused' ? answer : answer.body;
}

/** A member that answers with its name only when `release()` is called: a request held in flight. */
export async function startHeldMember(t: TapTest, name: string) {
  const held: ServerResponse[] = [];
  const member = await startHttpMember(t, name, (_req, res) => held.push(res));
  return Object.assign(member, {
    /** Resolves once `count` requests are held. */
    holding: (count = 1) => waitFor(() => held.length >= count),
    release() {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
    },
  });
}

/** `count` distinct ports nothing listens on right now (all taken at once, then released). */
export const freePorts = findFreePorts;

/** Holds 127.0.0.1:port until the test ends, so that binding it fails (EADDRINUSE). */
export async function occupy(t: TapTest, port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
}
