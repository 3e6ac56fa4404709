// The mapping benchmark's baseline: the smallest reasonable node:http server answering recorded
// answers verbatim. ANSWERS names a JSON file of `RecordedAnswer`s; a request is matched by method,
// URL and body (read in full, as any server must), and answered with the recorded status, headers and
// bytes. No routing table, no validation, no logging. Prints `READY <url>`.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

/** One request and the answer the real server gave it. */
export type RecordedAnswer = {
  method: string;
  path: string;
  body: string;
  status: number;
  headers: Record<string, string>;
  /** The answer's bytes, base64. */
  answer: string;
};

/** The key a request is answered by. */
export const answerKey = (method: string, path: string, body: string) => `${method} ${path}\n${body}`;

if (import.meta.main) {
  const recorded = JSON.parse(readFileSync(process.env.ANSWERS!, 'utf8')) as RecordedAnswer[];
  const answers = new Map(
    recorded.map((r) => {
      const bytes = Buffer.from(r.answer, 'base64');
      return [
        answerKey(r.method, r.path, r.body),
        { status: r.status, headers: { ...r.headers, 'content-length': String(bytes.length) }, bytes },
      ];
    }),
  );
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const found = answers.get(answerKey(req.method!, req.url!, Buffer.concat(chunks).toString()));
      if (!found) {
        res.writeHead(404, { 'content-length': '0' }).end();
        return;
      }
      res.writeHead(found.status, found.headers).end(found.bytes);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number };
    process.stdout.write(`READY http://127.0.0.1:${address.port}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
}
