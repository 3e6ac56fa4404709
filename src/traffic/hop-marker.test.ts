import t from 'tap';
import { createHopMarker, loopProblem, MAX_HOPS } from './hop-marker.ts';
import { upstreamHeaders } from './forward-headers.ts';

t.test('each marker is its own: a random pseudonym in a Via entry', async (t) => {
  const [one, two] = [createHopMarker(), createHopMarker()];
  t.match(one.name, /^portolan-[0-9a-f]{12}$/);
  t.equal(one.via, `1.1 ${one.name}`);
  t.not(one.name, two.name);
});

t.test('a request carrying our own Via entry, in any Via field and any name case, is a loop', async (t) => {
  const marker = createHopMarker();
  t.equal(loopProblem(['Host', 'x'], marker), undefined);
  t.equal(loopProblem(['Via', '1.1 portolan-000000000000', 'Host', 'x'], marker), undefined, "another instance's marker is not ours");
  t.match(loopProblem(['Host', 'x', 'via', `1.0 fred, ${marker.via}`], marker), /request loop/);
  t.match(loopProblem(['VIA', '1.1 a', 'Via', marker.via], marker), /request loop/);
  t.equal(loopProblem(['X-Via', marker.via], marker), undefined, 'only the Via field');
});

t.test('more Via entries than the bound, across fields, are refused', async (t) => {
  const marker = createHopMarker();
  const entries = (n: number) => Array.from({ length: n }, (_, i) => `1.1 p${i}`).join(', ');
  t.equal(loopProblem(['Via', entries(MAX_HOPS)], marker), undefined);
  t.match(loopProblem(['Via', entries(MAX_HOPS + 1)], marker), /more than 16 proxies/);
  t.match(loopProblem(['Via', entries(10), 'Via', entries(7)], marker), /more than 16 proxies/);
});

t.test('the marker goes to the member after the Via fields the request had', async (t) => {
  t.same(upstreamHeaders(['Via', '1.0 fred', 'Host', 'x'], undefined, '1.1 portolan-abc'), [
    'Via',
    '1.0 fred',
    'Host',
    'x',
    'Via',
    '1.1 portolan-abc',
  ]);
  t.same(upstreamHeaders(['Host', 'x'], undefined), ['Host', 'x'], 'none given: none added');
});
