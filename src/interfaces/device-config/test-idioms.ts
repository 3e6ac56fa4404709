// Test helpers for the rule idioms table (fixtures/irule-idioms.yaml): reading it, the declaration that
// deploys every idiom as a service of its own, the echo members, and a client that can send from another
// loopback address, on a shared connection, or raw (to see a reset or a close).
import { readFileSync } from 'node:fs';
import { Agent, type IncomingMessage, request } from 'node:http';
import { connect } from 'node:net';
import { parse } from 'yaml';
import type { TapTest } from '../../lib/tap-test.ts';
import { startMember } from './test-device.ts';

export type IdiomRequest = { method?: string; path: string; headers?: Record<string, string>; from?: string };
export type IdiomExpect = {
  status?: number;
  body?: string;
  headers?: Record<string, string | null>;
  member?: string;
  received?: { method?: string; uri?: string; headers?: Record<string, string | null> };
  ended?: 'reset' | 'closed';
  log?: string;
};
export type Idiom = {
  name: string;
  rules: string[];
  pool?: string;
  adjusted?: string;
  dataGroups?: Record<string, { type: 'string' | 'integer' | 'ip'; records: Record<string, string> }>;
  connection?: 'shared';
  together?: boolean;
  requests: IdiomRequest[];
  expect: IdiomExpect[];
};
export type IdiomTable = { pools: string[]; idioms: Idiom[] };

export const IDIOMS_FILE = new URL('./fixtures/irule-idioms.yaml', import.meta.url);

/** The table, checked enough that a typo in it fails loudly rather than asserting nothing. */
export function readIdioms(file: URL = IDIOMS_FILE): IdiomTable {
  const table = parse(readFileSync(file, 'utf8')) as IdiomTable;
  const names = new Set<string>();
  const groups = new Set<string>();
  for (const idiom of table.idioms) {
    if (names.has(idiom.name)) throw new Error(`idiom "${idiom.name}" twice`);
    names.add(idiom.name);
    if (!idiom.rules?.length || idiom.requests?.length !== idiom.expect?.length || idiom.requests.length === 0)
      throw new Error(`idiom "${idiom.name}": rules, and as many expect as requests, are needed`);
    for (const group of Object.keys(idiom.dataGroups ?? {})) {
      if (groups.has(group)) throw new Error(`data group ${group} twice`);
      groups.add(group);
    }
    for (const expect of idiom.expect) {
      if (expect.member === undefined) throw new Error(`idiom "${idiom.name}": every expect names its member (or none)`);
      if (expect.status === undefined && expect.ended === undefined) throw new Error(`idiom "${idiom.name}": a status or an ending`);
    }
  }
  return table;
}

/** The service of an idiom, its rules and its data groups, as members of one application. */
export function idiomMembers(idiom: Idiom, index: number, port: number): Record<string, unknown> {
  const ruleNames = idiom.rules.map((_, j) => `idiom${index}_rule${j}`);
  const members: Record<string, unknown> = {
    [`idiom${index}`]: {
      class: 'Service_HTTP',
      virtualAddresses: ['127.0.0.1'],
      virtualPort: port,
      pool: idiom.pool ?? 'web_pool',
      iRules: ruleNames,
    },
  };
  for (const [j, text] of idiom.rules.entries()) members[ruleNames[j]!] = { class: 'iRule', iRule: text };
  for (const [name, group] of Object.entries(idiom.dataGroups ?? {})) {
    const records = Object.entries(group.records).map(([key, value]) => ({ key, value }));
    members[name] = { class: 'Data_Group', keyDataType: group.type, records };
  }
  return members;
}

/** A member that answers JSON naming itself and what it got; 404 for a path starting /missing. */
export async function startEchoMember(t: TapTest, name: string) {
  return startMember(t, name, (req, res) => {
    const body = JSON.stringify({ member: name, method: req.method, uri: req.url, headers: req.headers });
    res.writeHead(req.url?.startsWith('/missing') ? 404 : 200, {
      'content-type': 'application/json',
      server: 'echo-member',
      'x-powered-by': 'node',
      'x-member': name,
    });
    res.end(body);
  });
}

export type Answer = { status: number; headers: IncomingMessage['headers']; body: string; reusedSocket: boolean };

/** One request to 127.0.0.1:port from `from` (a loopback address), on `agent`'s connection when given. */
export function send(port: number, req: IdiomRequest, agent?: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        method: req.method ?? 'GET',
        path: req.path,
        headers: req.headers,
        localAddress: req.from ?? '127.0.0.1',
        agent: agent ?? false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, reusedSocket: outgoing.reusedSocket }));
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** A request written on a raw connection: what came back, and whether the connection ended by a reset or a close. */
export function sendRaw(port: number, req: IdiomRequest): Promise<{ data: string; ended: 'reset' | 'closed' }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: req.from ?? '127.0.0.1' }, () => {
      const fields = Object.entries({ host: 'idioms.test', ...req.headers }).map(([n, v]) => `${n}: ${v}\r\n`);
      socket.write(`${req.method ?? 'GET'} ${req.path} HTTP/1.1\r\n${fields.join('')}\r\n`);
    });
    let data = '';
    socket.on('data', (chunk) => (data += chunk));
    socket.on('error', () => resolve({ data, ended: 'reset' }));
    socket.on('end', () => resolve({ data, ended: 'closed' }));
  });
}

/** A keep-alive agent with one connection: requests through it go one after another on the same socket. */
export const sharedConnection = () => new Agent({ keepAlive: true, maxSockets: 1 });
