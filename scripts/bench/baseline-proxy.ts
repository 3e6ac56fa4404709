// The benchmark's baseline: the smallest reasonable reverse proxy on node:http, keep-alive to one
// upstream, bodies piped both ways, no routing, no limiter, no logging. Prints `READY <url>`.
import { Agent, createServer, request } from 'node:http';

const [host, port] = (process.env.UPSTREAM ?? '127.0.0.1:8081').split(':') as [string, string];
const agent = new Agent({ keepAlive: true, maxSockets: 128 });

const server = createServer((req, res) => {
  const upstream = request({ host, port: Number(port), method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`READY http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
