import type { Agent, IncomingMessage } from 'node:http';
import t from 'tap';
import * as sdk from '../../../generated/device-config/sdk.gen.ts';
import { startTestSystem } from '../../app/test-system.ts';
import { findFreePorts } from '../../lib/free-ports.ts';
import type { TapTest } from '../../lib/tap-test.ts';
import { captureLogs } from '../../lib/test-logger.ts';
import { ADMIN_PASSWORD, declaration, deviceClient } from './test-device.ts';
import {
  type Answer,
  type Idiom,
  type IdiomExpect,
  idiomMembers,
  readIdioms,
  send,
  sendRaw,
  sharedConnection,
  startEchoMember,
} from './test-idioms.ts';

// The rule idioms table (fixtures/irule-idioms.yaml): one declaration deploys every idiom as a service of
// its own, through the device's REST, and each idiom's requests go over real sockets to its listener.

const table = readIdioms();
t.ok(table.idioms.length >= 40, `${table.idioms.length} idioms in the table`);

type Member = Awaited<ReturnType<typeof startEchoMember>>;

t.test('the idioms of the table, on live traffic through one deployed declaration', async (t) => {
  const logs = captureLogs('info');
  const { system } = await startTestSystem(t, { config: { adminPassword: ADMIN_PASSWORD }, fakeTimers: true, logger: logs.logger });
  const client = deviceClient(system.url('device'));
  const members = new Map<string, Member>();
  for (const pool of table.pools) members.set(pool.replace(/_pool$/, ''), await startEchoMember(t, pool.replace(/_pool$/, '')));
  const ports = await findFreePorts(table.idioms.length);

  const body: Record<string, unknown> = {};
  for (const pool of table.pools) {
    const member = members.get(pool.replace(/_pool$/, ''))!;
    body[pool] = { class: 'Pool', members: [{ servicePort: member.port, serverAddresses: ['127.0.0.1'] }] };
  }
  for (const [i, idiom] of table.idioms.entries()) Object.assign(body, idiomMembers(idiom, i, ports[i]!));
  const deployed = await sdk.deployDeclaration({ client, body: declaration('Idioms', body) as never });
  t.match(deployed.data, { results: [{ code: 200, message: 'success', tenant: 'Idioms' }] }, 'every idiom deployed in one declaration');
  t.equal((deployed.data as any)?.results?.[0]?.warnings, undefined, 'no idiom is reported as not modelled');
  if (deployed.response?.status !== 200) return t.fail(JSON.stringify(deployed.error).slice(0, 2000));

  for (const [i, idiom] of table.idioms.entries()) {
    await t.test(idiom.name, async (t) => {
      if (idiom.together) await runTogether(t, idiom, ports[i]!, members);
      else await runInTurn(t, idiom, ports[i]!, members);
      for (const expect of idiom.expect) if (expect.log) t.ok(logs.text().includes(expect.log), `the device's log holds "${expect.log}"`);
    });
  }
});

const counts = (members: Map<string, Member>) => new Map([...members].map(([name, m]) => [name, m.received.length]));

/** The requests one after another (on one connection when the idiom says so); who answered each, by the members' counts. */
async function runInTurn(t: TapTest, idiom: Idiom, port: number, members: Map<string, Member>) {
  const agent: Agent | undefined = idiom.connection === 'shared' ? sharedConnection() : undefined;
  t.teardown(() => agent?.destroy());
  for (const [j, req] of idiom.requests.entries()) {
    const expect = idiom.expect[j]!;
    const before = counts(members);
    const label = `${req.method ?? 'GET'} ${req.path}`;
    if (expect.ended) {
      const raw = await sendRaw(port, req);
      t.same(
        raw,
        { data: '', ended: expect.ended },
        `${label}: the connection ends by a ${expect.ended === 'reset' ? 'reset' : 'close'}, no answer`,
      );
    } else {
      const answer = await send(port, req, agent);
      checkAnswer(t, label, answer, expect);
      if (agent && j > 0) t.ok(answer.reusedSocket, `${label}: on the same connection`);
    }
    const asked = [...members].filter(([name, m]) => m.received.length > before.get(name)!);
    t.same(
      asked.map(([name]) => name),
      expect.member === 'none' ? [] : [expect.member],
      `${label}: ${expect.member === 'none' ? 'no member was asked' : `member ${expect.member} answered`}`,
    );
    if (expect.received && asked.length === 1) checkReceived(t, label, asked[0]![1].received.at(-1)!, expect.received);
  }
}

/** The requests at once: each answer as expected, and the members asked as many times as the answers from members say. */
async function runTogether(t: TapTest, idiom: Idiom, port: number, members: Map<string, Member>) {
  const before = counts(members);
  const answers = await Promise.all(idiom.requests.map((req) => send(port, req)));
  const asked = new Map<string, IncomingMessage[]>([...members].map(([name, m]) => [name, m.received.slice(before.get(name)!)]));
  for (const [j, req] of idiom.requests.entries()) {
    const expect = idiom.expect[j]!;
    const label = `${req.method ?? 'GET'} ${req.path}`;
    checkAnswer(t, label, answers[j]!, expect);
    if (expect.member !== 'none') {
      t.equal(JSON.parse(answers[j]!.body).member, expect.member, `${label}: member ${expect.member} answered`);
      const got = asked.get(expect.member!)!.find((r) => r.url === (expect.received?.uri ?? req.path));
      t.ok(got, `${label}: member ${expect.member} got it`);
      if (got && expect.received) checkReceived(t, label, got, expect.received);
    }
  }
  const fromMembers = idiom.expect.filter((e) => e.member !== 'none').length;
  t.equal(
    [...asked.values()].reduce((sum, list) => sum + list.length, 0),
    fromMembers,
    'the members were asked only for those',
  );
}

function checkAnswer(t: TapTest, label: string, answer: Answer, expect: IdiomExpect) {
  t.equal(answer.status, expect.status, `${label}: status ${expect.status}`);
  if (expect.body !== undefined) t.equal(answer.body, expect.body, `${label}: the body`);
  for (const [name, value] of Object.entries(expect.headers ?? {}))
    t.equal(answer.headers[name], value ?? undefined, `${label}: ${name} ${value === null ? 'absent' : value}`);
}

function checkReceived(t: TapTest, label: string, got: IncomingMessage, expect: NonNullable<IdiomExpect['received']>) {
  if (expect.method) t.equal(got.method, expect.method, `${label}: the member got ${expect.method}`);
  if (expect.uri) t.equal(got.url, expect.uri, `${label}: the member got ${expect.uri}`);
  for (const [name, value] of Object.entries(expect.headers ?? {}))
    t.equal(got.headers[name], value ?? undefined, `${label}: the member got ${name} ${value === null ? 'absent' : value}`);
}
