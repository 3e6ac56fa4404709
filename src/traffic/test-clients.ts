// Test helpers: clients that behave as real ones do, byte for byte, over their own connections.
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

export type Answer = { status: number; statusMessage: string; headers: IncomingHttpHeaders; rawHeaders: string[]; body: Buffer };

/** One request on its own connection; resolves with the whole answer. */
export function send(
  port: number,
  options: { method?: string; path?: string; headers?: OutgoingHttpHeaders },
  body?: Buffer | string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, agent: false, method: options.method ?? 'GET', path: options.path ?? '/', headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            statusMessage: res.statusMessage!,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Bytes of the body a client sends before it waits for an answer. */
export const SENT_FIRST = 64 * 1024;

export type EarlyOutcome = {
  answeredBeforeBodySent: boolean;
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Socket errors the client saw (ECONNRESET, EPIPE): none when the gateway closes cleanly. */
  errors: string[];
};

/** An HTTP/1.1 answer with a Content-Length, once it has all arrived; undefined until then. */
function completeAnswer(text: string): Pick<EarlyOutcome, 'status' | 'headers' | 'body'> | undefined {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const [statusLine, ...lines] = text.slice(0, headEnd).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const body = text.slice(headEnd + 4);
  if (!(body.length >= Number(headers['content-length']))) return undefined;
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

/**
 * POSTs a JSON body of `size` bytes (Content-Length) over a raw connection, as a client streaming a
 * large upload does: sends the first 64 KiB, and the rest once the whole answer has arrived (`'after
 * answer'`) or never (`'never'`, the connection left open). Resolves once the connection has closed.
 * Without an answer after `patienceMs` the client sends the rest anyway, and without a close after
 * twice that it gives up: a broken proxy fails the test, it does not hang it.
 */
export function postLargeJson(port: number, path: string, size: number, sendRest: 'after answer' | 'never', patienceMs = 5000) {
  const body = Buffer.from(JSON.stringify({ note: 'x'.repeat(size - 11) }));
  const outcome: EarlyOutcome = { answeredBeforeBodySent: false, errors: [] };
  const closed = new Promise<EarlyOutcome>((resolve) => {
    let received = '';
    let restSent = false;
    const socket = connect(port, '127.0.0.1');
    const sendTheRest = () => {
      clearTimeout(noAnswer);
      if (restSent || sendRest === 'never') return;
      restSent = true;
      socket.write(body.subarray(SENT_FIRST));
    };
    const noAnswer = setTimeout(sendTheRest, patienceMs);
    const noClose = setTimeout(() => (outcome.errors.push('no close'), socket.destroy()), 2 * patienceMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const answer = outcome.status === undefined ? completeAnswer(received) : undefined;
      if (!answer) return;
      Object.assign(outcome, answer, { answeredBeforeBodySent: !restSent });
      sendTheRest();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => outcome.errors.push(error.code ?? error.message));
    socket.on('close', () => {
      clearTimeout(noAnswer);
      clearTimeout(noClose);
      resolve(outcome);
    });
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: charts.example\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body.subarray(0, SENT_FIRST));
  });
  return { outcome, closed };
}
