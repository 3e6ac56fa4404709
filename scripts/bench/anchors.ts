// The gateway benchmark's anchors: HAProxy (one thread, `http-reuse always`, keep-alive to the member) and
// nginx (one worker, upstream keepalive), the proxies the Portolan gateway is measured against. Both are
// Debian packages, installed with apt-get when their command is missing; each runs in the foreground from a
// generated configuration in a temporary folder (its pid file, logs and temp paths there too), no access
// log (as the gateway at log level silent), and is stopped at the end.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export type Anchor = {
  name: string;
  url: string;
  /** The processes that serve requests (HAProxy's one process, nginx's worker): their CPU is measured. */
  workerPids: number[];
  version: string;
};

export type AnchorKind = 'haproxy' | 'nginx';

type Command = { command: string; versionArgs: string[]; debian: string[] };

const COMMANDS: Record<AnchorKind, Command> = {
  haproxy: { command: 'haproxy', versionArgs: ['-v'], debian: ['haproxy'] },
  // nginx-light on Debian 12 is nginx plus one module; the core package is enough for a reverse proxy.
  nginx: { command: 'nginx', versionArgs: ['-v'], debian: ['nginx'] },
};

/** `haproxy -v` / `nginx -v` (nginx prints it on stderr), first line; undefined when the command is missing. */
function versionOf(kind: AnchorKind): string | undefined {
  const { command, versionArgs } = COMMANDS[kind];
  const result = spawnSync(command, versionArgs, { encoding: 'utf8' });
  if (result.error) return undefined;
  const said = `${result.stdout}${result.stderr}`;
  // "HAProxy version 2.6.12-1+deb12u4 2026/10/17 - https://haproxy.org/", "nginx version: nginx/1.22.1"
  return /version:? (?:nginx\/)?(\S+)/.exec(said)?.[1] ?? said.trim().split('\n')[0]!.trim();
}

const apt = (args: string[]) =>
  spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });

/**
 * The anchor's version, installing its Debian package first when the command is missing; or why it cannot
 * run (the benchmark then names that row as skipped).
 */
export function ensureAnchor(kind: AnchorKind, log: (line: string) => void): { ok: true; version: string } | { ok: false; why: string } {
  const present = versionOf(kind);
  if (present) return { ok: true, version: present };
  const { command, debian } = COMMANDS[kind];
  const args = ['install', '-y', '--no-install-recommends', ...debian];
  log(`bench:gateway: ${command} is missing; installing it (apt-get ${args.join(' ')})`);
  let result = apt(args);
  // A fresh machine may have no package lists yet: fetch them once and try again.
  if (result.status !== 0 && !result.error) {
    log('bench:gateway: apt-get install failed; running apt-get update and trying once more');
    if (apt(['update']).status === 0) result = apt(args);
  }
  const installed = versionOf(kind);
  if (installed) return { ok: true, version: installed };
  const cause = result.error ? `apt-get could not be started (${result.error.message})` : `apt-get exited with status ${result.status}`;
  return { ok: false, why: `${command} could not be installed: ${cause}; install Debian's ${debian.join(' ')} by hand (as root)` };
}

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for the anchor to bind). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

function haproxyConfig(port: number, member: string, maxconn: number): string {
  return `global
  nbthread 1
  maxconn ${maxconn}

defaults
  mode http
  option http-keep-alive
  http-reuse always
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  timeout http-keep-alive 30s

frontend bench
  bind 127.0.0.1:${port}
  default_backend member

backend member
  http-reuse always
  server member ${member}
`;
}

function nginxConfig(dir: string, port: number, member: string, maxconn: number): string {
  const temp = (name: string) => join(dir, 'temp', name);
  return `worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;

events {
  worker_connections ${maxconn};
}

http {
  access_log off;
  client_body_temp_path ${temp('body')};
  proxy_temp_path ${temp('proxy')};
  fastcgi_temp_path ${temp('fastcgi')};
  uwsgi_temp_path ${temp('uwsgi')};
  scgi_temp_path ${temp('scgi')};
  keepalive_requests 1000000;

  upstream member {
    server ${member};
    keepalive 64;
    keepalive_requests 1000000;
  }

  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://member;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
}

/** The ids of `pid`'s child processes (from /proc, every thread's children list). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const path = `/proc/${pid}/task/${task}/children`;
    if (existsSync(path)) out.push(...readFileSync(path, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  }
  return out;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type Anchors = {
  /**
   * Starts the anchor in front of `member` (host:port), taking `connections` client connections at once, and
   * resolves once a GET of `path` through it answers 2xx.
   */
  start(kind: AnchorKind, options: { member: string; path: string; version: string; connections: number }): Promise<Anchor>;
  /** SIGTERM to every anchor, then waits for each to exit (SIGKILL after 5 s). */
  stop(): Promise<void>;
};

/**
 * @example
 * const anchors = startAnchors(dir);
 * try { const haproxy = await anchors.start('haproxy', { member: '127.0.0.1:8081', path: '/api/vessels', version, connections: 50 }); }
 * finally { await anchors.stop(); }
 */
export function startAnchors(dir: string): Anchors {
  const running: ChildProcess[] = [];
  return {
    async start(kind, { member, path, version, connections }) {
      const home = join(dir, kind);
      mkdirSync(join(home, 'temp'), { recursive: true });
      const port = await freePort();
      const config = join(home, `${kind}.conf`);
      // Room for the clients' connections and as many to the member (each takes a file descriptor twice over in
      // nginx), small enough for a default file-descriptor limit.
      const maxconn = Math.max(1024, 4 * connections);
      writeFileSync(config, kind === 'haproxy' ? haproxyConfig(port, member, maxconn) : nginxConfig(home, port, member, maxconn));
      const args =
        kind === 'haproxy' ? ['-db', '-f', config] : ['-g', 'daemon off;', '-p', `${home}/`, '-c', config, '-e', join(home, 'error.log')];
      const child = spawn(COMMANDS[kind].command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      running.push(child);
      const said: string[] = [];
      child.stderr!.on('data', (chunk: Buffer) => said.push(chunk.toString()));
      const url = `http://127.0.0.1:${port}`;
      for (let attempt = 0; ; attempt++) {
        if (child.exitCode !== null || child.signalCode !== null || attempt >= 100)
          throw new Error(
            `${kind} did not come up (${child.exitCode ?? child.signalCode ?? 'no answer in 10 s'}): ${said.join('').trim()}`,
          );
        const answered = await fetch(new URL(path, url)).then(
          async (response) => {
            await response.arrayBuffer();
            return response.ok;
          },
          () => false,
        );
        if (answered) break;
        await sleep(100);
      }
      // HAProxy in the foreground (-db) is one process; nginx is a master and its worker(s).
      const workerPids = kind === 'haproxy' ? [child.pid!] : childPids(child.pid!);
      if (workerPids.length === 0) throw new Error(`${kind}: no worker process found under pid ${child.pid}`);
      return { name: kind, url, workerPids, version };
    },
    async stop() {
      await Promise.all(
        running.map(async (child) => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = once(child, 'exit');
          const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
          child.kill('SIGTERM');
          await exited;
          clearTimeout(timer);
        }),
      );
    },
  };
}
