import t from 'tap';
import { portolanError } from '../../lib/errors.ts';
import { renderTopologyError } from './error-shape.ts';
import { invalidTopology } from './topology-outcome.ts';

t.test("B's error shape: the client's address as `referer`, and the topology check's problems as `errors`", async (t) => {
  const refused = renderTopologyError(invalidTopology([{ pointer: '/targetList/0/name', message: "names no device: 'x'" }]), {
    headers: {},
    remoteAddress: '192.0.2.10',
  });
  t.equal(refused.status, 400);
  // Member order as the handlers wrote it before the shape rendered their failures.
  t.equal(
    JSON.stringify(refused.body),
    JSON.stringify({
      code: 400,
      message: 'Invalid topology request: 1 problem.',
      errors: [{ pointer: '/targetList/0/name', message: "names no device: 'x'" }],
      referer: '192.0.2.10',
      kind: ':resterrorresponse',
    }),
  );

  const unknownAddress = renderTopologyError(portolanError('objectNotFound', "Topology 'x' was not found."), { headers: {} });
  t.same(unknownAddress, { status: 404, body: { code: 404, message: "Topology 'x' was not found.", kind: ':resterrorresponse' } });

  // The framework's validation problems are summed up in its message (the spec's LoginBadRequest examples list none).
  const framework = renderTopologyError(
    portolanError('invalidRequest', "Invalid request: body must have required property 'password'.", [
      { pointer: '/body', keyword: 'required', message: "must have required property 'password'" },
    ]),
    { headers: {}, remoteAddress: '192.0.2.10' },
  );
  t.notOk('errors' in (framework.body as object), 'no `errors` beside a framework validation message');
});

t.test('the count of an invalid topology request says "more than" once the problem list was cut', async (t) => {
  const problems = [
    { pointer: '/a', message: 'one' },
    { pointer: '/b', message: 'two' },
    { pointer: '', message: '... and 5 more' },
  ];
  t.equal(invalidTopology(problems).message, 'Invalid topology request: more than 2 problems.');
  t.equal(invalidTopology(problems.slice(0, 2)).message, 'Invalid topology request: 2 problems.');
});
