import t from 'tap';
import fc from 'fast-check';
import { createSpecValidator } from '../../lib/spec-ajv.ts';
import { loadSpec } from '../../lib/spec-catalog.ts';
import { checkTopologyRequest, type CheckDeps, type Problem } from './topology-check.ts';

const spec = loadSpec('topology');
const validators = createSpecValidator(spec);
const deps: CheckDeps = {
  schema: (name) => validators.at(`/components/schemas/${name}`),
  knownDevices: new Set(['sslo-device-1.example.net', 'sslo-device-2.example.net']),
};
const createTopology = (spec.paths['/mgmt/cm/ssl-orch/api/topology'] as Record<string, any>).post;
/** A fresh copy of one of `createTopology`'s request examples. */
const example = (name: 'l3Outbound' | 'noChain'): any =>
  structuredClone(createTopology.requestBody.content['application/json'].examples[name].value);
/** The problems one of `createTopology`'s 400 examples lists. */
const errorsOf = (name: string): Problem[] => createTopology.responses['400'].content['application/json'].examples[name].value.errors;

const NAME = "must start with a letter and hold only letters, digits, '_', '.' or '-' (at most 48 characters)";
const RULES = '/template/SECURITY_POLICY/rules';
const DEVICES = '/template/SERVICE/service1/customService/loadBalancing/devices';
const longName = 'n'.repeat(300);

type Case = { name: string; body: any; problems: [pointer: string, message: string][] };
/** The l3Outbound example with one or more breaks. */
const broken = (breakIt: (body: any) => void) => {
  const body = example('l3Outbound');
  breakIt(body);
  return body;
};

const cases: Case[] = [
  { name: 'the l3Outbound example is valid', body: example('l3Outbound'), problems: [] },
  { name: 'the noChain example is valid', body: example('noChain'), problems: [] },
  {
    name: 'a missing targetList is one problem at the root',
    body: broken((b) => delete b.targetList),
    problems: [['', "must have required property 'targetList'"]],
  },
  {
    name: 'TOPOLOGY.sslSetting must name SSL_SETTINGS',
    body: broken((b) => (b.template.TOPOLOGY.sslSetting = 'ssl_other')),
    problems: [['/template/TOPOLOGY/sslSetting', "TOPOLOGY.sslSetting 'ssl_other' does not match SSL_SETTINGS.name 'ssl_outbound'."]],
  },
  {
    name: 'TOPOLOGY.securityPolicy must name SECURITY_POLICY',
    body: broken((b) => (b.template.SECURITY_POLICY.name = 'policy_other')),
    problems: [
      [
        '/template/TOPOLOGY/securityPolicy',
        "TOPOLOGY.securityPolicy 'policy_outbound' does not match SECURITY_POLICY.name 'policy_other'.",
      ],
    ],
  },
  {
    name: "a rule's serviceChain must name a chain of SERVICE_CHAIN (its name, not its label)",
    body: broken((b) => (b.template.SECURITY_POLICY.rules[1].actionOptions.serviceChain = 'chain1')),
    problems: [
      [
        `${RULES}/1/actionOptions/serviceChain`,
        "Rule 'Finance_Rule': actionOptions.serviceChain 'chain1' names no chain in SERVICE_CHAIN.",
      ],
    ],
  },
  {
    name: "a chain's orderedServiceList must name services of SERVICE",
    body: broken((b) => b.template.SERVICE_CHAIN.chain1.orderedServiceList.push({ name: 'service1' })),
    problems: [
      [
        '/template/SERVICE_CHAIN/chain1/orderedServiceList/1/name',
        "Service chain 'chain_icap': orderedServiceList entry 'service1' names no service in SERVICE.",
      ],
    ],
  },
  {
    name: 'a chain label is escaped in the pointer',
    body: broken((b) => (b.template.SERVICE_CHAIN['a/b~c'] = { name: 'chain_av', orderedServiceList: [{ name: 'icap_av' }] })),
    problems: [
      ['/template/SERVICE_CHAIN/a~1b~0c/orderedServiceList/0/name', "Service chain 'chain_av': orderedServiceList entry 'icap_av'"],
    ],
  },
  {
    name: 'a policy without a default rule',
    body: broken((b) => delete b.template.SECURITY_POLICY.rules[2].isDefault),
    problems: [[RULES, "SECURITY_POLICY 'policy_outbound' has no default rule (isDefault: true); it needs exactly one."]],
  },
  {
    name: 'two default rules, one of them with conditions',
    body: broken((b) => (b.template.SECURITY_POLICY.rules[0].isDefault = true)),
    problems: [
      [RULES, "SECURITY_POLICY 'policy_outbound' has 2 default rules ('Pinners_Rule', 'All Traffic'); it needs exactly one."],
      [`${RULES}/0/conditions`, "Rule 'Pinners_Rule' is the default rule and has 2 conditions; the default rule has none."],
    ],
  },
  {
    name: 'a default rule with a condition',
    body: broken((b) => (b.template.SECURITY_POLICY.rules[2].conditions = [{ type: 'SSL Check', options: { ssl: false } }])),
    problems: [[`${RULES}/2/conditions`, "Rule 'All Traffic' is the default rule and has 1 condition; the default rule has none."]],
  },
  {
    name: 'rule names are unique',
    body: broken((b) => (b.template.SECURITY_POLICY.rules[1].name = 'Pinners_Rule')),
    problems: [[`${RULES}/1/name`, "Rule name 'Pinners_Rule' is used more than once in SECURITY_POLICY 'policy_outbound'"]],
  },
  {
    name: 'an SSL Check whose ssl is not a boolean is one problem, not the noise of every Condition branch',
    body: broken((b) => (b.template.SECURITY_POLICY.rules[0].conditions[1].options.ssl = 'yes')),
    problems: [[`${RULES}/0/conditions/1/options/ssl`, 'must be boolean']],
  },
  {
    name: 'an SNI Category Lookup whose category is not an array',
    body: broken((b) => (b.template.SECURITY_POLICY.rules[0].conditions[0].options.category = 'x')),
    problems: [[`${RULES}/0/conditions/0/options/category`, 'must be array']],
  },
  {
    name: 'the strict condition types take no other options',
    body: broken((b) => (b.template.SECURITY_POLICY.rules[0].conditions[0].options = { categories: ['Pinners'] })),
    problems: [
      [`${RULES}/0/conditions/0/options`, "must have required property 'category'"],
      [`${RULES}/0/conditions/0/options`, "must NOT have additional property 'categories'"],
    ],
  },
  {
    name: 'actionOptions.ssl is bypass or intercept',
    body: broken((b) => (b.template.SECURITY_POLICY.rules[0].actionOptions.ssl = 'decrypt')),
    problems: [[`${RULES}/0/actionOptions/ssl`, 'must be equal to one of the allowed values: bypass, intercept']],
  },
  {
    name: 'a condition without a type, and one that is not an object',
    body: broken((b) => b.template.SECURITY_POLICY.rules[0].conditions.splice(0, 2, { options: { category: ['Pinners'] } }, 'SSL Check')),
    problems: [
      [`${RULES}/0/conditions/0`, 'must have a string type'],
      [`${RULES}/0/conditions/1`, 'must be object'],
    ],
  },
  {
    name: 'a condition of a type the spec does not show is kept with any options',
    body: broken((b) =>
      b.template.SECURITY_POLICY.rules[1].conditions.push(
        { type: 'Client IP Subnet Match', options: { subnet: ['10.0.0.0/8'], negate: 'maybe', nested: { deep: [1, null] } } },
        { type: 'constructor', options: {} },
      ),
    ),
    problems: [],
  },
  {
    name: 'a target device the inventory does not know',
    body: broken((b) => (b.targetList[0].name = 'sslo-device-9.example.net')),
    problems: [['/targetList/0/name', "targetList: no DEVICE named 'sslo-device-9.example.net' is managed by this system."]],
  },
  {
    name: 'a target that is not a DEVICE',
    body: broken((b) => (b.targetList[0].type = 'DEVICE_GROUP')),
    problems: [
      ['/targetList/0/type', "targetList entry 'sslo-device-1.example.net' has type 'DEVICE_GROUP'; only DEVICE targets are supported."],
    ],
  },
  {
    name: 'a target listed twice',
    body: broken((b) =>
      b.targetList.push({ type: 'DEVICE', name: 'sslo-device-2.example.net' }, { type: 'DEVICE', name: 'sslo-device-1.example.net' }),
    ),
    problems: [['/targetList/2/name', "targetList: device 'sslo-device-1.example.net' is listed more than once."]],
  },
  {
    name: 'a bad address and a port out of range',
    body: broken((b) => {
      b.template.SERVICE.service1.customService.loadBalancing.devices[0].ip = '198.51.100.256';
      b.template.SERVICE.service1.customService.loadBalancing.devices[1].port = '70000';
    }),
    problems: [
      [`${DEVICES}/0/ip`, 'must be an IPv4 address or an IPv6 address'],
      [`${DEVICES}/1/port`, 'must be a port number from 1 to 65535, as a string'],
    ],
  },
  {
    name: 'a load-balanced device listed twice, and service and chain names used twice',
    body: broken((b) => {
      b.template.SERVICE.service2 = structuredClone(b.template.SERVICE.service1);
      b.template.SERVICE.service1.customService.loadBalancing.devices.push({ ip: '198.51.100.20', port: '1344' });
      b.template.SERVICE_CHAIN.chain2 = { name: 'chain_icap', orderedServiceList: [] };
    }),
    problems: [
      ['/template/SERVICE_CHAIN/chain2/name', "Service chain name 'chain_icap' is used more than once in SERVICE_CHAIN"],
      [`${DEVICES}/2`, "Service 'icap_dlp': device '198.51.100.20' port '1344' is listed more than once."],
      ['/template/SERVICE/service2/name', "Service name 'icap_dlp' is used more than once in SERVICE"],
    ],
  },
  {
    name: 'names with a space or longer than 48 characters say what a name looks like',
    body: broken((b) => {
      b.template.TOPOLOGY.name = 'sslo outbound';
      b.template.TOPOLOGY.sslSetting = b.template.SSL_SETTINGS.name = 's'.repeat(49);
    }),
    problems: [
      ['/template/TOPOLOGY/name', NAME],
      ['/template/TOPOLOGY/sslSetting', NAME],
      ['/template/SSL_SETTINGS/name', NAME],
    ],
  },
  {
    name: 'a value echoed in a message is clipped, and a label the schema refuses is reported once',
    body: broken((b) => {
      b.template.SECURITY_POLICY.rules[1].actionOptions.serviceChain = longName;
      b.template.SERVICE_CHAIN[longName] = { name: 7, orderedServiceList: [{ name: 'icap_av' }] };
    }),
    problems: [
      [`${RULES}/1/actionOptions/serviceChain`, NAME],
      [
        `${RULES}/1/actionOptions/serviceChain`,
        `Rule 'Finance_Rule': actionOptions.serviceChain '${'n'.repeat(61)}...' names no chain in SERVICE_CHAIN.`,
      ],
      ['/template/SERVICE_CHAIN', `property name '${'n'.repeat(61)}...' must NOT have more than 255 characters`],
    ],
  },
  {
    name: 'several problems in one request are all reported together, in document order',
    body: broken((b) => {
      b.targetList[0].name = 'sslo-device-9.example.net';
      b.template.SECURITY_POLICY.rules[0].conditions[1].options.ssl = 'yes';
      b.template.SERVICE_CHAIN.chain1.orderedServiceList[0].name = 'icap_av';
      b.template.SSL_SETTINGS.name = 'ssl_default';
      b.template.SECURITY_POLICY.rules[2].actionOptions.serviceChain = 'chain_av';
    }),
    problems: [
      ['/template/TOPOLOGY/sslSetting', "TOPOLOGY.sslSetting 'ssl_outbound' does not match SSL_SETTINGS.name 'ssl_default'."],
      [`${RULES}/0/conditions/1/options/ssl`, 'must be boolean'],
      [
        `${RULES}/2/actionOptions/serviceChain`,
        "Rule 'All Traffic': actionOptions.serviceChain 'chain_av' names no chain in SERVICE_CHAIN.",
      ],
      [
        '/template/SERVICE_CHAIN/chain1/orderedServiceList/0/name',
        "Service chain 'chain_icap': orderedServiceList entry 'icap_av' names no service in SERVICE.",
      ],
      ['/targetList/0/name', "targetList: no DEVICE named 'sslo-device-9.example.net' is managed by this system."],
    ],
  },
  {
    name: 'members beyond the ones the interface models are accepted anywhere but in the two strict condition types',
    body: broken((b) => {
      const extra = { vendorExtension: { any: [1, 'two', null] } };
      for (const place of [
        b,
        b.template,
        b.template.TOPOLOGY,
        b.template.TOPOLOGY.ingressNetwork,
        b.template.TOPOLOGY.ingressNetwork.vlans[0],
        b.template.SSL_SETTINGS,
        b.template.SECURITY_POLICY,
        ...b.template.SECURITY_POLICY.rules,
        ...b.template.SECURITY_POLICY.rules.map((rule: any) => rule.actionOptions),
        b.template.SERVICE_CHAIN.chain1,
        b.template.SERVICE_CHAIN.chain1.orderedServiceList[0],
        b.template.SERVICE.service1,
        b.template.SERVICE.service1.customService,
        b.template.SERVICE.service1.customService.loadBalancing,
        ...b.template.SERVICE.service1.customService.loadBalancing.devices,
        b.targetList[0],
      ])
        Object.assign(place, extra);
      b.template.SSL_SETTINGS.clientSettings = { cipherString: 'DEFAULT', certKeyChain: [] };
    }),
    problems: [],
  },
  {
    name: 'members named __proto__ and constructor are members like any other',
    body: JSON.parse(
      JSON.stringify(example('l3Outbound'))
        .replace('"service1"', '"__proto__"')
        .replace('"chain1"', '"constructor"')
        .replace('"Pinners_Rule"', '"toString"'),
    ),
    problems: [],
  },
  {
    name: 'references named like Object.prototype members do not resolve by accident',
    body: broken((b) => {
      b.template.SECURITY_POLICY.rules[1].actionOptions.serviceChain = 'constructor';
      b.template.SERVICE_CHAIN.chain1.orderedServiceList[0].name = 'hasOwnProperty';
      b.targetList[0].name = '__proto__';
    }),
    problems: [
      [`${RULES}/1/actionOptions/serviceChain`, "actionOptions.serviceChain 'constructor' names no chain"],
      ['/template/SERVICE_CHAIN/chain1/orderedServiceList/0/name', "orderedServiceList entry 'hasOwnProperty' names no service"],
      ['/targetList/0/name', "no DEVICE named '__proto__'"],
    ],
  },
  {
    name: 'a rule with more than 32 conditions',
    body: broken(
      (b) =>
        (b.template.SECURITY_POLICY.rules[1].conditions = Array.from({ length: 33 }, () => ({
          type: 'SSL Check',
          options: { ssl: true },
        }))),
    ),
    problems: [[`${RULES}/1/conditions`, 'must NOT have more than 32 items']],
  },
  {
    name: 'a policy of more than 256 rules, its default rule last, is too long and nothing else',
    body: broken((b) => {
      const [, finance, all] = b.template.SECURITY_POLICY.rules;
      b.template.SECURITY_POLICY.rules = [...Array.from({ length: 299 }, (_, i) => ({ ...finance, name: `Rule_${i}` })), all];
    }),
    problems: [[RULES, 'must NOT have more than 256 items']],
  },
  {
    name: 'more than 64 chains, the one a rule names last, is too many and nothing else',
    body: broken((b) => {
      for (let i = 2; i <= 70; i++)
        b.template.SERVICE_CHAIN[`chain${i}`] = { name: `chain_${i}`, orderedServiceList: [{ name: 'icap_dlp' }] };
      b.template.SECURITY_POLICY.rules[1].actionOptions.serviceChain = 'chain_70';
    }),
    problems: [['/template/SERVICE_CHAIN', 'must NOT have more than 64 properties']],
  },
  {
    name: 'sections of the wrong JSON type are schema problems only',
    body: broken((b) => {
      b.template.SECURITY_POLICY.rules = { 0: b.template.SECURITY_POLICY.rules[0] };
      b.template.SERVICE_CHAIN = [];
      b.targetList = null;
    }),
    problems: [
      [`${RULES}`, 'must be array'],
      ['/template/SERVICE_CHAIN', 'must be object'],
      ['/targetList', 'must be array'],
    ],
  },
];

t.test('checkTopologyRequest reports exactly the expected problems', async (t) => {
  t.ok(cases.filter((c) => c.problems.length > 0).length >= 18, 'at least 18 invalid requests');
  for (const { name, body, problems } of cases) {
    const found = checkTopologyRequest(body, deps);
    const matches =
      found.length === problems.length &&
      problems.every(([pointer, message], i) => found[i]!.pointer === pointer && found[i]!.message.includes(message));
    t.ok(matches, name, { found, wanted: problems });
  }
});

t.test("the spec's own 400 examples are what the check answers", async (t) => {
  const twoDefaults = broken((b) => {
    b.template.SECURITY_POLICY.rules = [
      { name: 'Default A', isDefault: true, actionOptions: { ssl: 'intercept', serviceChain: 'chain_icap' } },
      { name: 'Default B', isDefault: true, conditions: [{ type: 'SSL Check', options: { ssl: true } }], actionOptions: { ssl: 'bypass' } },
    ];
  });
  const referencesBroken = broken((b) => {
    b.template.SSL_SETTINGS.name = 'ssl_default';
    b.template.SECURITY_POLICY.rules[2].actionOptions.serviceChain = 'chain_av';
    b.template.SERVICE_CHAIN.chain1.orderedServiceList[0].name = 'icap_av';
    b.targetList[0].name = 'sslo-device-9.example.net';
  });
  t.same(
    checkTopologyRequest(
      broken((b) => delete b.targetList),
      deps,
    ),
    errorsOf('invalidBody'),
  );
  t.same(checkTopologyRequest(referencesBroken, deps), errorsOf('brokenReferences'));
  t.same(checkTopologyRequest(twoDefaults, deps), errorsOf('defaultRule'));
  t.same(
    checkTopologyRequest(
      broken((b) => (b.template.SECURITY_POLICY.rules[0].conditions[1].options.ssl = 'yes')),
      deps,
    ),
    errorsOf('badCondition'),
  );
});

t.test('a request with more than 100 problems lists 100 and says how many more', async (t) => {
  const body = broken(
    (b) => (b.targetList = Array.from({ length: 150 }, (_, i) => ({ type: 'DEVICE', name: `unknown-${i}.example.net` }))),
  );
  const found = checkTopologyRequest(body, deps);
  t.equal(found.length, 101);
  t.same(found[0], { pointer: '/targetList', message: 'must NOT have more than 64 items' });
  t.same(found[100], { pointer: '', message: '... and 51 more' });
});

t.test('a request with more than 10 000 problems stops checking conditions and says so', async (t) => {
  const body = broken(
    (b) =>
      (b.template.SECURITY_POLICY.rules = Array.from({ length: 200 }, (_, i) => ({
        name: `R${i}`,
        conditions: Array.from({ length: 60 }, () => ({})),
        actionOptions: { ssl: 'bypass' },
      }))),
  );
  const found = checkTopologyRequest(body, deps);
  t.equal(found.length, 101);
  t.match(found[100], { pointer: '', message: /^\.\.\. and at least \d+ more$/ });
});

t.test("the view's cuts are one past the largest limits of the request schema", async (t) => {
  const limits = { maxItems: 0, maxProperties: 0 };
  const seen = new Set<unknown>();
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    const schema = node as Record<string, unknown>;
    if (typeof schema.$ref === 'string') walk((spec.components!.schemas as Record<string, unknown>)[schema.$ref.split('/').pop()!]);
    for (const key of ['maxItems', 'maxProperties'] as const)
      if (typeof schema[key] === 'number') limits[key] = Math.max(limits[key], schema[key]);
    Object.values(schema).forEach(walk);
  };
  walk({ $ref: '#/components/schemas/TopologyRequest' });
  t.same(limits, { maxItems: 256, maxProperties: 64 }, 'LIST_LIMIT and MAP_LIMIT of topology-check.ts are one past these');
});

/** The value a JSON pointer names, or a miss. */
const resolve = (body: unknown, pointer: string): { found: boolean } => {
  let node = body;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return { found: false };
    node = (node as Record<string, unknown>)[key];
  }
  return { found: true };
};

/** Every path of a JSON value, as segments. */
const pathsOf = (value: unknown, path: (string | number)[] = []): (string | number)[][] => [
  path,
  ...(Array.isArray(value)
    ? value.flatMap((v, i) => pathsOf(v, [...path, i]))
    : typeof value === 'object' && value !== null
      ? Object.entries(value).flatMap(([k, v]) => pathsOf(v, [...path, k]))
      : []),
];

t.test('any JSON, or the example with any part replaced by any JSON, gives bounded problems that point into the request', async (t) => {
  const key = fc.oneof(
    fc.string({ maxLength: 4 }),
    fc.constantFrom('__proto__', 'constructor', 'toString', 'name', 'type', 'isDefault', 'a/b~c', 'x'.repeat(300)),
  );
  const { json } = fc.letrec((tie) => ({
    json: fc.oneof(
      { depthSize: 'small' },
      fc.jsonValue({ maxDepth: 1 }),
      fc.string({ maxLength: 400 }),
      fc.array(tie('json'), { maxLength: 4 }),
      fc.dictionary(key, tie('json'), { maxKeys: 4 }),
    ),
  }));
  const base = example('l3Outbound');
  const mutated = fc.tuple(fc.constantFrom(...pathsOf(base).filter((p) => p.length > 0)), json).map(([path, value]) => {
    const body = structuredClone(base);
    const parent = path.slice(0, -1).reduce((node: any, segment) => node[segment], body);
    Object.defineProperty(parent, path.at(-1)!, { value, enumerable: true, writable: true, configurable: true });
    return body;
  });
  let valid = 0;
  fc.assert(
    fc.property(fc.oneof(json, mutated), (body) => {
      const problems = checkTopologyRequest(body, deps);
      if (problems.length === 0) valid++;
      return (
        problems.length <= 101 &&
        problems.every(
          (p) =>
            typeof p.pointer === 'string' && resolve(body, p.pointer).found && typeof p.message === 'string' && p.message.length <= 300,
        )
      );
    }),
    { numRuns: 400 },
  );
  t.ok(valid > 0 && valid < 400, `both valid and invalid requests were generated (${valid} of 400 valid)`);
});
