import fc from 'fast-check';
import t from 'tap';
import { MAX_DEPTH, readDeployRequest } from './request.ts';
import { declarationOf, info, requestExamples, responseExample, schemaAt } from './test-spec.ts';

const read = (body: unknown, query: { updateMode?: 'selective' | 'complete' } = {}) => readDeployRequest(body, schemaAt, info, query);
const errorsOf = (body: unknown) => {
  const answer = read(body);
  return answer.ok ? [] : answer.errors;
};
/** The seed's first declaration, changed by `change` (a fresh copy each time). */
const first = (change: (d: Record<string, any>) => void = () => {}) => {
  const declaration = structuredClone(declarationOf('firstDeclaration'));
  change(declaration);
  return declaration;
};
const nested = (levels: number, leaf: unknown = 'x'): unknown => {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

t.test('every request example of deployDeclaration is valid, and reads as the deployment it shows', async (t) => {
  const expected: Record<string, object> = {
    firstDeclaration: { action: 'deploy', persist: true, redeployAge: 0, dryRun: false, updateMode: 'selective' },
    secondDeclarationReplaces: { action: 'deploy', persist: true, updateMode: 'selective' },
    keepBothServices: { action: 'deploy', persist: true, updateMode: 'selective' },
    bareDeclaration: { action: 'deploy', persist: true, redeployAge: 0, dryRun: false, updateMode: 'selective' },
    realDeclaration: { action: 'deploy', persist: true, dryRun: false },
    completeMode: { action: 'deploy', updateMode: 'complete' },
    removeTenant: { action: 'deploy', declaration: { Sample_02: { class: 'Tenant' } } },
  };
  // A list of declarations: each item is read as a request of its own (appsvcs-multi.ts).
  const listed = [
    { action: 'deploy', declaration: { Sample_04: {} } },
    { action: 'deploy', declaration: { Sample_05: {} } },
  ];
  t.same(Object.keys(requestExamples).sort(), [...Object.keys(expected), 'severalDeclarations'].sort(), 'every example has a row here');
  for (const [name, example] of Object.entries(requestExamples)) {
    const items = name === 'severalDeclarations' ? (example.value as unknown[]) : [example.value];
    for (const [index, item] of items.entries()) {
      const answer = read(item);
      t.same(answer.ok ? [] : answer.errors, [], `${name} is valid`);
      t.match(answer, { ok: true, request: name === 'severalDeclarations' ? listed[index] : expected[name] }, name);
    }
  }
});

t.test('the declaration is kept as given with virtualPort 80 written in, as the GET and deploy answers show it', async (t) => {
  const answer = read(requestExamples.firstDeclaration!.value);
  t.ok(answer.ok);
  const stored = answer.ok ? answer.request.declaration : undefined;
  t.same(stored?.Sample_01, responseExample('200', 'success').declaration.Sample_01, 'as in the success example');
  t.same(
    Object.keys((stored as any).Sample_01.A1.service),
    ['class', 'virtualAddresses', 'virtualPort', 'pool'],
    'in the order the examples show',
  );
  t.equal(
    (requestExamples.firstDeclaration!.value as any).declaration.Sample_01.A1.service.virtualPort,
    undefined,
    'the body is not changed',
  );
  const bare = read(requestExamples.bareDeclaration!.value);
  t.equal(bare.ok && (bare.request.declaration as any).Sample_02.A1.api_service.virtualPort, 8080, 'a given virtualPort stays');
  t.notOk(
    'template' in (read(first((d) => delete d.Sample_01.A1.template)) as any).request.declaration.Sample_01.A1,
    'template is not written in',
  );
});

t.test('the wrapper: defaults, dry runs and updateMode', async (t) => {
  const body = (fields: object, declaration: object = first()) => ({ class: 'AS3', ...fields, declaration });
  t.match(read(body({ action: 'dry-run', persist: false })), { ok: true, request: { action: 'dry-run', persist: false, dryRun: true } });
  t.match(
    read(
      body(
        {},
        first((d) => (d.controls = { class: 'Controls', dryRun: true })),
      ),
    ),
    { ok: true, request: { action: 'deploy', dryRun: true } },
    'controls.dryRun',
  );
  t.match(read(body({ action: 'redeploy', redeployAge: 3 }, undefined)), { ok: true, request: { action: 'redeploy', redeployAge: 3 } });
  t.match(read({ class: 'AS3', action: 'retrieve' }), { ok: true, request: { action: 'retrieve' } }, 'retrieve needs no declaration');
  t.notOk(read({ class: 'AS3', action: 'retrieve' }).ok && 'declaration' in (read({ class: 'AS3', action: 'retrieve' }) as any).request);
  t.match(read(first((d) => (d.updateMode = 'complete'))), { request: { updateMode: 'complete' } }, "the declaration's updateMode");
  t.match(
    read(
      first((d) => (d.updateMode = 'complete')),
      { updateMode: 'selective' },
    ),
    { request: { updateMode: 'selective' } },
    'the query wins',
  );
  t.match(read(first(), { updateMode: 'complete' }), { request: { updateMode: 'complete' } });
});

t.test("the spec's 422 examples are what the device answers", async (t) => {
  const invalid = responseExample('422', 'invalidDeclaration');
  t.same(errorsOf(first((d) => delete d.Sample_01.A1.service.virtualAddresses)), invalid.errors, 'invalidDeclaration');
  const unsupported = responseExample('422', 'unsupportedSchemaVersion');
  t.same(errorsOf(first((d) => (d.schemaVersion = '3.57.0'))), unsupported.errors, 'unsupportedSchemaVersion');
});

t.test('schemaVersion is compared as numbers against the range of /info', async (t) => {
  const range = { schemaMinimum: '3.10.0', schemaCurrent: '3.50.2' };
  const check = (version: string) => {
    const answer = readDeployRequest(
      first((d) => (d.schemaVersion = version)),
      schemaAt,
      range,
      {},
    );
    return answer.ok ? [] : answer.errors;
  };
  const outside = ['/schemaVersion: should be equal to one of the supported schema versions (3.10.0 to 3.50.2)'];
  for (const version of ['3.9.0', '3.9.99', '3.50.3', '3.100.0']) t.same(check(version), outside, `${version} is outside`);
  for (const version of ['3.10.0', '3.10.10', '3.50.2', '3.49.9']) t.same(check(version), [], `${version} is inside`);
});

t.test('a body that is neither AS3 nor ADC is one error', async (t) => {
  for (const body of [null, [], 'ADC', 42, {}, { class: 'Tenant' }, { class: ['AS3'] }, Object.create(null)]) {
    t.same(errorsOf(body), ['/class: should be equal to one of the allowed values (AS3, ADC)'], JSON.stringify(body) ?? 'undefined');
  }
});

t.test('invalid declarations: each problem once, at its pointer, in the real product words', async (t) => {
  const cases: { name: string; body: unknown; errors: string[] }[] = [
    {
      name: 'unknown action, persist not boolean, redeployAge too old (wrapper pointers)',
      body: { class: 'AS3', action: 'nope', persist: 'yes', redeployAge: 16 },
      errors: ['/action: should be equal to one of the allowed values', '/persist: should be boolean', '/redeployAge: should be <= 15'],
    },
    {
      name: 'deploy without a declaration',
      body: { class: 'AS3', action: 'deploy' },
      errors: [": should have required property 'declaration'"],
    },
    { name: 'a declaration that is not an object', body: { class: 'AS3', declaration: [] }, errors: [': should be object'] },
    {
      name: 'a declaration without class and schemaVersion',
      body: { class: 'AS3', declaration: { id: 'x' } },
      errors: [": should have required property 'class'", ": should have required property 'schemaVersion'"],
    },
    {
      name: 'schemaVersion of another form',
      body: first((d) => (d.schemaVersion = '4.0')),
      errors: ['/schemaVersion: should match pattern "^3\\.[0-9]+\\.[0-9]+$"'],
    },
    {
      name: 'declaration settings of the wrong type',
      body: first((d) => Object.assign(d, { id: 7, label: 'x'.repeat(65), updateMode: 'all', controls: { dryRun: 'yes' } })),
      errors: [
        '/id: should be string',
        '/label: should NOT be longer than 64 characters',
        '/updateMode: should be equal to one of the allowed values',
        '/controls/dryRun: should be boolean',
      ],
    },
    {
      name: 'tenant names that are not names',
      body: first((d) => Object.assign(d, { '1bad': { class: 'Tenant' }, ['T'.repeat(191)]: { class: 'Tenant' } })),
      errors: [
        ': propertyName "1bad" should match pattern "^(\\$schema|[A-Za-z][0-9A-Za-z_.-]*)$"',
        `: propertyName "${'T'.repeat(61)}..." should NOT be longer than 190 characters`,
      ],
    },
    {
      name: 'a tenant that is not an object, one of another class',
      body: first((d) => Object.assign(d, { T2: 'x', T3: { class: 'Application' } })),
      errors: ['/T2: should be object', '/T3/class: should be equal to constant'],
    },
    {
      name: 'tenant settings of the wrong type',
      body: first((d) => Object.assign(d.Sample_01, { defaultRouteDomain: 65536, enable: 'no' })),
      errors: ['/Sample_01/defaultRouteDomain: should be <= 65535', '/Sample_01/enable: should be boolean'],
    },
    {
      name: 'an application without class, one with a bad name',
      body: first((d) => Object.assign(d.Sample_01, { A2: { template: 'generic' }, 'A 3': { class: 'Application' } })),
      errors: [
        "/Sample_01/A2: should have required property 'class'",
        '/Sample_01: propertyName "A 3" should match pattern "^[A-Za-z][0-9A-Za-z_.-]*$"',
      ],
    },
    {
      name: 'application settings of the wrong type',
      body: first((d) => Object.assign(d.Sample_01.A1, { template: 5, constants: [] })),
      errors: ['/Sample_01/A1/template: should be string', '/Sample_01/A1/constants: should be object'],
    },
    {
      name: 'members that are not objects or have no class',
      body: first((d) => Object.assign(d.Sample_01.A1, { m1: 5, m2: {}, m3: { class: 7 }, '-m4': { class: 'Monitor' } })),
      errors: [
        '/Sample_01/A1/m1: should be object',
        "/Sample_01/A1/m2: should have required property 'class'",
        '/Sample_01/A1/m3/class: should be string',
        '/Sample_01/A1: propertyName "-m4" should match pattern "^[A-Za-z]([0-9A-Za-z_.-]{0,188}[0-9A-Za-z_.])?$"',
      ],
    },
    {
      name: 'virtual addresses of every wrong kind',
      body: first(
        (d) => (d.Sample_01.A1.service.virtualAddresses = ['10.0.1.300', 5, { use: 'x', bigip: '/a' }, ['a'], { bigip: 'nope' }]),
      ),
      errors: [
        '/Sample_01/A1/service/virtualAddresses/0: should be an IPv4 or IPv6 address',
        '/Sample_01/A1/service/virtualAddresses/1: should be string,object,array',
        '/Sample_01/A1/service/virtualAddresses/2: should NOT have more than 1 properties',
        '/Sample_01/A1/service/virtualAddresses/3: should NOT have fewer than 2 items',
        '/Sample_01/A1/service/virtualAddresses/4/bigip: should match pattern "^/"',
      ],
    },
    {
      name: 'no virtual address at all, and seventeen',
      body: first((d) => {
        d.Sample_01.A1.service.virtualAddresses = [];
        d.Sample_01.A1.service_2 = { class: 'Service_HTTP', virtualAddresses: Array(17).fill('10.0.0.1') };
      }),
      errors: [
        '/Sample_01/A1/service/virtualAddresses: should NOT have fewer than 1 items',
        '/Sample_01/A1/service_2/virtualAddresses: should NOT have more than 16 items',
      ],
    },
    {
      name: 'ports out of range',
      body: first((d) => {
        d.Sample_01.A1.service.virtualPort = -1;
        d.Sample_01.A1.web_pool.members[0].servicePort = 65536;
      }),
      errors: ['/Sample_01/A1/service/virtualPort: should be >= 0', '/Sample_01/A1/web_pool/members/0/servicePort: should be <= 65535'],
    },
    {
      name: 'a pool that is neither a name nor a reference',
      body: first((d) => (d.Sample_01.A1.service.pool = 7)),
      errors: ['/Sample_01/A1/service/pool: should be string,object'],
    },
    {
      name: 'monitors: empty name, path without slash, empty reference, two references',
      body: first((d) => (d.Sample_01.A1.web_pool.monitors = ['', { bigip: 'Common/http' }, {}, { use: 'a', bigip: '/b' }])),
      errors: [
        '/Sample_01/A1/web_pool/monitors/0: should NOT be shorter than 1 characters',
        '/Sample_01/A1/web_pool/monitors/1/bigip: should match pattern "^/"',
        '/Sample_01/A1/web_pool/monitors/2: should NOT have fewer than 1 properties',
        '/Sample_01/A1/web_pool/monitors/3: should NOT have more than 1 properties',
      ],
    },
    {
      name: 'pool members: no addresses with static discovery, a port as text, no address, an unknown state',
      body: first((d) => {
        d.Sample_01.A1.web_pool.members = [
          { servicePort: 80 },
          { servicePort: 80, addressDiscovery: 'fqdn' },
          { servicePort: '80', serverAddresses: [], adminState: 'down' },
          { serverAddresses: ['192.0.2.1%x'] },
        ];
      }),
      errors: [
        "/Sample_01/A1/web_pool/members/0: should have required property 'serverAddresses'",
        '/Sample_01/A1/web_pool/members/2/servicePort: should be integer',
        '/Sample_01/A1/web_pool/members/2/adminState: should be equal to one of the allowed values',
        "/Sample_01/A1/web_pool/members/3: should have required property 'servicePort'",
        '/Sample_01/A1/web_pool/members/3/serverAddresses/0: should be an IPv4 or IPv6 address',
      ],
    },
    {
      name: 'a pool of the wrong shape',
      body: first((d) =>
        Object.assign(d.Sample_01.A1.web_pool, {
          monitors: 'http',
          members: Array(257).fill({ servicePort: 1, serverAddresses: ['10.0.0.1'] }),
          loadBalancingMode: 3,
        }),
      ),
      errors: [
        '/Sample_01/A1/web_pool/loadBalancingMode: should be string',
        '/Sample_01/A1/web_pool/monitors: should be array',
        '/Sample_01/A1/web_pool/members: should NOT have more than 256 items',
      ],
    },
    {
      name: 'errors in the wrapper and in the declaration together',
      body: { class: 'AS3', persist: 1, declaration: first((d) => delete d.Sample_01.A1.service.virtualAddresses) },
      errors: ['/persist: should be boolean', "/Sample_01/A1/service: should have required property 'virtualAddresses'"],
    },
  ];
  for (const { name, body, errors } of cases) t.same(errorsOf(body), errors, name);
});

t.test('every error is at most 200 characters, and at most 100 errors are listed', async (t) => {
  const long = 'S'.repeat(64);
  const many = first((d) => {
    for (let i = 0; i < 150; i++) d.Sample_01.A1[`m${i}`] = 5;
    d.Sample_01.A1[long] = { class: 'Application', [long]: 1 };
    d[long] = { class: 'Tenant', [long]: { class: 'Application', [long]: { class: 'Service_HTTP' } } };
  });
  const errors = errorsOf(many);
  t.equal(errors.length, 101);
  t.equal(errors.at(-1), '... and 51 more');
  t.ok(
    errors.every((e) => e.length <= 200),
    'each capped',
  );
  t.equal(
    errorsOf(first((d) => (d[long] = { class: 'Tenant', [long]: { class: 'Application', [long]: { class: 'Service_HTTP' } } })))[0]!.length,
    200,
  );
});

t.test('a megabyte address is refused for its length, before the IPv6 pattern (it backtracks quadratically) reads it', async (t) => {
  // That it takes time linear in the address is proven as a ratio in src/hostile/device-config.test.ts (F-declaration-linear).
  const huge = `${':'.repeat(1_000_000)}x`;
  const errors = errorsOf(
    first((d) => {
      d.Sample_01.A1.service.virtualAddresses = [huge];
      d.Sample_01.A1.web_pool.members[0].serverAddresses = [huge, '192.0.2.1'];
    }),
  );
  t.same(errors, [
    '/Sample_01/A1/service/virtualAddresses/0: should NOT be longer than 64 characters',
    '/Sample_01/A1/web_pool/members/0/serverAddresses/0: should NOT be longer than 64 characters',
  ]);
  t.same(errorsOf(first((d) => (d.Sample_01.A1.service.virtualAddresses = [`10.0.0.1${'x'.repeat(100)}`]))), [
    '/Sample_01/A1/service/virtualAddresses/0: should be an IPv4 or IPv6 address',
    '/Sample_01/A1/service/virtualAddresses/0: should NOT be longer than 64 characters',
  ]);
});

t.test('names that are Object.prototype members are plain names', async (t) => {
  const body = JSON.parse(
    '{"class":"ADC","schemaVersion":"3.0.0","constructor":{"class":"Tenant","toString":{"class":"Application","hasOwnProperty":{"class":"Pool"},"__proto__":{"class":"Service_HTTP","virtualAddresses":["127.0.0.1"]}}}}',
  );
  t.same(errorsOf(body), [
    '/constructor/toString: propertyName "__proto__" should match pattern "^[A-Za-z]([0-9A-Za-z_.-]{0,188}[0-9A-Za-z_.])?$"',
  ]);
  t.same(errorsOf({ class: 'ADC', schemaVersion: '3.0.0', valueOf: { class: 'Tenant' } }), []);
});

t.test(`bodies nested deeper than the schema are refused at ${MAX_DEPTH} levels, never with a RangeError`, async (t) => {
  const inMember = (levels: number) => first((d) => (d.Sample_01.A1.blob = { class: 'Certificate', data: nested(levels) }));
  t.same(errorsOf(inMember(10_000)), [`/Sample_01/A1/blob/data: should NOT be nested more than ${MAX_DEPTH} levels deep`]);
  t.same(errorsOf(inMember(MAX_DEPTH - 6)), [], 'up to the limit is fine');
  t.same(
    errorsOf(inMember(MAX_DEPTH - 3)),
    [`/Sample_01/A1/blob/data: should NOT be nested more than ${MAX_DEPTH} levels deep`],
    'one level more is not',
  );
  t.same(errorsOf({ class: 'AS3', logLevel: nested(10_000), declaration: first() }), [
    `/logLevel: should NOT be nested more than ${MAX_DEPTH} levels deep`,
  ]);
  let deepArray: unknown = [];
  for (let i = 0; i < 100_000; i++) deepArray = [deepArray];
  t.same(errorsOf({ class: 'AS3', declaration: { class: 'ADC', schemaVersion: '3.0.0', T: deepArray } }), [
    `/T/0/0/0: should NOT be nested more than ${MAX_DEPTH} levels deep`,
  ]);
});

t.test('reading never throws, whatever JSON arrives (property)', async (t) => {
  const leaf = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom('10.0.0.1%2', '::1', 'http', '/Common/http', 'web_pool', 80));
  const service = fc.record(
    {
      class: fc.constant('Service_HTTP'),
      virtualAddresses: fc.array(leaf, { maxLength: 3 }),
      pool: leaf,
      virtualPort: fc.integer({ min: -2, max: 70_000 }),
    },
    { requiredKeys: ['class'] },
  );
  const member = fc.dictionary(fc.constantFrom('servicePort', 'serverAddresses', 'enable', 'adminState', 'ratio'), leaf);
  const pool = fc.record(
    { class: fc.constant('Pool'), monitors: fc.array(leaf, { maxLength: 3 }), members: fc.array(member, { maxLength: 3 }) },
    { requiredKeys: ['class'] },
  );
  const declarations = fc.record({
    class: fc.constantFrom('ADC', 'AS3', 'Tenant'),
    schemaVersion: fc.constantFrom('3.0.0', '3.99.0', '3.x', 5),
    T: fc.record(
      {
        class: fc.constantFrom('Tenant', 'Application'),
        A: fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(service, pool, leaf), { maxKeys: 4 }),
      },
      { requiredKeys: [] },
    ),
  });
  fc.assert(
    fc.property(
      fc.oneof(
        fc.jsonValue(),
        declarations,
        declarations.map((declaration) => ({ class: 'AS3', declaration })),
      ),
      (body) => {
        const answer = read(body);
        return answer.ok ? answer.request.action === 'deploy' : answer.errors.length > 0 && answer.errors.every((e) => e.length <= 200);
      },
    ),
    { numRuns: 2000 },
  );
  t.pass('2000 bodies read without throwing');
});
