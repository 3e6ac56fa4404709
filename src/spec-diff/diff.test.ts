// Table of before/after spec pairs, each with the exact changes the differ must report: check id, default
// severity, and where (JSON pointer). Small inline documents; the helpers below build the boilerplate around them.
import t from 'tap';
import { join } from 'node:path';
import { formatChange } from './change.ts';
import { diffSpecs } from './load.ts';

type Obj = Record<string, unknown>;
const doc = (paths: Obj, schemas: Obj = {}, extra: Obj = {}) => ({
  openapi: '3.1.0',
  info: { title: 't', version: '1.0.0' },
  paths,
  components: { schemas },
  ...extra,
});
const json = (schema: Obj) => ({ content: { 'application/json': { schema } } });
/** GET /things/{id} answering 200 with `schema`. */
const getThing = (schema: Obj, extra: Obj = {}) => ({
  '/things/{id}': {
    get: {
      operationId: 'getThing',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { '200': { description: 'ok', ...json(schema) } },
      ...extra,
    },
  },
});
/** POST /things taking `schema` and answering 201. */
const postThing = (schema: Obj, extra: Obj = {}) => ({
  '/things': {
    post: {
      operationId: 'createThing',
      requestBody: { required: true, ...json(schema) },
      responses: { '201': { description: 'created' } },
      ...extra,
    },
  },
});
const obj = (properties: Obj, required: string[] = [], more: Obj = {}) => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
  ...more,
});
const REQ = '/paths/~1things/post/requestBody/content/application~1json/schema';
const RES = '/paths/~1things~1{id}/get/responses/200/content/application~1json/schema';
const str = { type: 'string' };

type Row = { name: string; before: Obj; after: Obj; expect: [id: string, severity: string, pointer: string][] };

const rows: Row[] = [
  {
    name: 'a removed operation is breaking',
    before: { ...getThing(obj({})), ...postThing(obj({})) },
    after: getThing(obj({})),
    expect: [['operation-removed', 'breaking', '/paths/~1things/post']],
  },
  {
    name: 'an added operation is not',
    before: getThing(obj({})),
    after: { ...getThing(obj({})), ...postThing(obj({})) },
    expect: [['operation-added', 'info', '/paths/~1things/post']],
  },
  {
    name: 'a renamed operationId is breaking',
    before: getThing(obj({})),
    after: getThing(obj({}), { operationId: 'readThing' }),
    expect: [['operation-id-changed', 'breaking', '/paths/~1things~1{id}/get']],
  },
  {
    name: 'a path parameter renamed only is not a removal',
    before: getThing(obj({})),
    after: {
      '/things/{thingId}': {
        get: {
          operationId: 'getThing',
          parameters: [{ name: 'thingId', in: 'path', required: true, schema: str }],
          responses: { '200': { description: 'ok', ...json(obj({})) } },
        },
      },
    },
    expect: [['path-parameter-renamed', 'info', '/paths/~1things~1{thingId}/get/parameters/thingId']],
  },
  {
    name: 'a removed response status is breaking',
    before: getThing(obj({}), { responses: { '200': { description: 'ok' }, '404': { description: 'no' } } }),
    after: getThing(obj({}), { responses: { '200': { description: 'ok' } } }),
    expect: [['response-status-removed', 'breaking', '/paths/~1things~1{id}/get/responses/404']],
  },
  {
    name: 'a new response status is not',
    before: getThing(obj({}), { responses: { '200': { description: 'ok' } } }),
    after: getThing(obj({}), { responses: { '200': { description: 'ok' }, '404': { description: 'no' } } }),
    expect: [['response-status-added', 'info', '/paths/~1things~1{id}/get/responses/404']],
  },
  {
    name: 'a removed response field is breaking',
    before: getThing(obj({ a: str, b: str })),
    after: getThing(obj({ a: str })),
    expect: [['response-field-removed', 'breaking', `${RES}/properties/b`]],
  },
  {
    name: 'an added response field is not',
    before: getThing(obj({ a: str })),
    after: getThing(obj({ a: str, b: str })),
    expect: [['response-field-added', 'info', `${RES}/properties/b`]],
  },
  {
    name: 'a required response field becoming optional is breaking',
    before: getThing(obj({ a: str }, ['a'])),
    after: getThing(obj({ a: str })),
    expect: [['response-field-became-optional', 'breaking', `${RES}/properties/a`]],
  },
  {
    name: 'a widened response enum is breaking',
    before: getThing(obj({ s: { type: 'string', enum: ['on'] } })),
    after: getThing(obj({ s: { type: 'string', enum: ['on', 'off'] } })),
    expect: [['response-enum-widened', 'breaking', `${RES}/properties/s`]],
  },
  {
    name: 'a widened request enum is not',
    before: postThing(obj({ s: { type: 'string', enum: ['on'] } })),
    after: postThing(obj({ s: { type: 'string', enum: ['on', 'off'] } })),
    expect: [['request-enum-widened', 'info', `${REQ}/properties/s`]],
  },
  {
    name: 'a narrowed request enum is breaking',
    before: postThing(obj({ s: { type: 'string', enum: ['on', 'off'] } })),
    after: postThing(obj({ s: { type: 'string', enum: ['on'] } })),
    expect: [['request-enum-narrowed', 'breaking', `${REQ}/properties/s`]],
  },
  {
    name: 'a new required request field is breaking',
    before: postThing(obj({ a: str })),
    after: postThing(obj({ a: str, b: str }, ['b'])),
    expect: [['required-request-field-added', 'breaking', `${REQ}/properties/b`]],
  },
  {
    name: 'a new optional request field is not',
    before: postThing(obj({ a: str })),
    after: postThing(obj({ a: str, b: str })),
    expect: [['optional-request-field-added', 'info', `${REQ}/properties/b`]],
  },
  {
    name: 'an optional request field becoming required is breaking',
    before: postThing(obj({ a: str })),
    after: postThing(obj({ a: str }, ['a'])),
    expect: [['request-field-became-required', 'breaking', `${REQ}/properties/a`]],
  },
  {
    name: 'a removed request field is breaking',
    before: postThing(obj({ a: str, b: str })),
    after: postThing(obj({ a: str })),
    expect: [['request-field-removed', 'breaking', `${REQ}/properties/b`]],
  },
  {
    name: 'a changed type is breaking in a response',
    before: getThing(obj({ n: { type: 'integer' } })),
    after: getThing(obj({ n: str })),
    expect: [['response-type-changed', 'breaking', `${RES}/properties/n`]],
  },
  {
    name: 'a changed type is breaking in a request, even a widening one',
    before: postThing(obj({ n: { type: 'integer' } })),
    after: postThing(obj({ n: { type: 'number' } })),
    expect: [['request-type-changed', 'breaking', `${REQ}/properties/n`]],
  },
  {
    name: 'a lowered maxLength and a new pattern on a request are breaking; a raised maxLength is not',
    before: postThing(obj({ a: { type: 'string', maxLength: 10 }, b: { type: 'string', maxLength: 10 } })),
    after: postThing(obj({ a: { type: 'string', maxLength: 5, pattern: '^x' }, b: { type: 'string', maxLength: 20 } })),
    expect: [
      ['request-constraint-narrowed', 'breaking', `${REQ}/properties/a`],
      ['request-constraint-narrowed', 'breaking', `${REQ}/properties/a`],
      ['request-constraint-widened', 'info', `${REQ}/properties/b`],
    ],
  },
  {
    name: 'a lowered request maximum is breaking',
    before: postThing(obj({ n: { type: 'integer', maximum: 100 } })),
    after: postThing(obj({ n: { type: 'integer', maximum: 10 } })),
    expect: [['request-constraint-narrowed', 'breaking', `${REQ}/properties/n`]],
  },
  {
    name: 'a removed response media type is breaking, an added one is not',
    before: getThing(obj({}), {
      responses: { '200': { description: 'ok', content: { 'application/json': { schema: obj({}) }, 'text/csv': { schema: str } } } },
    }),
    after: getThing(obj({}), {
      responses: {
        '200': { description: 'ok', content: { 'application/json': { schema: obj({}) }, 'application/xml': { schema: obj({}) } } },
      },
    }),
    expect: [
      ['response-media-type-removed', 'breaking', '/paths/~1things~1{id}/get/responses/200/content/text~1csv'],
      ['response-media-type-added', 'info', '/paths/~1things~1{id}/get/responses/200/content/application~1xml'],
    ],
  },
  {
    name: 'a removed request media type is breaking',
    before: postThing(obj({}), {
      requestBody: {
        required: true,
        content: { 'application/json': { schema: obj({}) }, 'application/x-www-form-urlencoded': { schema: obj({}) } },
      },
    }),
    after: postThing(obj({})),
    expect: [['request-media-type-removed', 'breaking', '/paths/~1things/post/requestBody/content/application~1x-www-form-urlencoded']],
  },
  {
    name: 'a new required query parameter is breaking, a new optional one is not',
    before: getThing(obj({})),
    after: getThing(obj({}), {
      parameters: [
        { name: 'id', in: 'path', required: true, schema: str },
        { name: 'a', in: 'query', required: true, schema: str },
        { name: 'b', in: 'query', schema: str },
      ],
    }),
    expect: [
      ['required-parameter-added', 'breaking', '/paths/~1things~1{id}/get/parameters/a'],
      ['optional-parameter-added', 'info', '/paths/~1things~1{id}/get/parameters/b'],
    ],
  },
  {
    name: 'a security requirement added to an alternative is breaking',
    before: getThing(obj({}), { security: [{ basic: [] }] }),
    after: getThing(obj({}), { security: [{ basic: [], token: [] }] }),
    expect: [['security-requirement-added', 'breaking', '/paths/~1things~1{id}/get/security']],
  },
  {
    name: 'an anonymous operation that now asks credentials is breaking',
    before: getThing(obj({}), { security: [] }),
    after: getThing(obj({}), { security: [{ basic: [] }] }),
    expect: [['security-requirement-added', 'breaking', '/paths/~1things~1{id}/get/security']],
  },
  {
    name: 'a $ref-ed schema changed in one place is reported at every operation that uses it',
    before: { ...getThing({ $ref: '#/components/schemas/Thing' }), ...postThing({ $ref: '#/components/schemas/Thing' }) },
    after: { ...getThing({ $ref: '#/components/schemas/Thing' }), ...postThing({ $ref: '#/components/schemas/Thing' }) },
    expect: [
      ['response-field-removed', 'breaking', `${RES}/properties/b`],
      ['request-field-removed', 'breaking', `${REQ}/properties/b`],
    ],
  },
  {
    name: 'inline properties moved into allOf of a $ref-ed base change nothing; a field dropped from the base is breaking',
    before: getThing(obj({ a: str, b: str }, ['a'])),
    after: getThing({ allOf: [{ $ref: '#/components/schemas/Base' }, obj({ c: str })] }),
    expect: [
      ['response-field-removed', 'breaking', `${RES}/properties/b`],
      ['response-field-added', 'info', `${RES}/properties/c`],
      ['component-schema-added', 'info', '/components/schemas/Base'],
    ],
  },
  {
    name: 'nullable: true and a type array with null are the same type',
    before: getThing(obj({ a: { type: 'string', nullable: true } })),
    after: getThing(obj({ a: { type: ['string', 'null'] } })),
    expect: [],
  },
  {
    name: 'a response field that may now be null is breaking',
    before: getThing(obj({ a: str })),
    after: getThing(obj({ a: { type: ['string', 'null'] } })),
    expect: [['response-null-allowed', 'breaking', `${RES}/properties/a`]],
  },
  {
    name: 'a request field that now accepts null is not',
    before: postThing(obj({ a: str })),
    after: postThing(obj({ a: { type: ['string', 'null'] } })),
    expect: [['request-null-allowed', 'info', `${REQ}/properties/a`]],
  },
  {
    name: 'description and example changes are not breaking',
    before: getThing(obj({ a: { type: 'string', description: 'x' } })),
    after: getThing(obj({ a: { type: 'string', description: 'y', examples: ['z'] } })),
    expect: [['schema-description-changed', 'info', `${RES}/properties/a`]],
  },
  {
    name: 'a new security alternative is not breaking',
    before: getThing(obj({}), { security: [{ basic: [] }] }),
    after: getThing(obj({}), { security: [{ basic: [] }, { token: [] }] }),
    expect: [['security-alternative-added', 'info', '/paths/~1things~1{id}/get/security']],
  },
  {
    name: 'oneOf variants in another order are the same response',
    before: getThing({ oneOf: [obj({ a: str }, ['a']), obj({ n: { type: 'integer' } }), str] }),
    after: getThing({ oneOf: [str, obj({ n: { type: 'integer' } }), obj({ a: str }, ['a'])] }),
    expect: [],
  },
  {
    name: 'anyOf variants in another order are the same request',
    before: postThing({ anyOf: [obj({ a: str }, ['a']), obj({ b: { type: 'integer' } }, ['b'])] }),
    after: postThing({ anyOf: [obj({ b: { type: 'integer' } }, ['b']), obj({ a: str }, ['a'])] }),
    expect: [],
  },
  {
    name: 'a reordered variant that gained an optional field is matched to its old self, not its old position',
    before: getThing({ oneOf: [obj({ a: str }, ['a']), obj({ b: str }, ['b'])] }),
    after: getThing({ oneOf: [obj({ b: str, c: str }, ['b']), obj({ a: str }, ['a'])] }),
    expect: [['response-field-added', 'info', `${RES}/oneOf/0/properties/c`]],
  },
  {
    name: 'a request variant removed from a reordered oneOf is breaking at its old place; the others are unchanged',
    before: postThing({ oneOf: [obj({ a: str }, ['a']), obj({ b: str }, ['b']), obj({ c: str }, ['c'])] }),
    after: postThing({ oneOf: [obj({ c: str }, ['c']), obj({ a: str }, ['a'])] }),
    expect: [['request-variant-removed', 'breaking', `${REQ}/oneOf/1`]],
  },
  {
    name: 'a response variant added to a reordered anyOf is breaking at its new place',
    before: getThing({ anyOf: [str, { type: 'integer' }] }),
    after: getThing({ anyOf: [{ type: 'integer' }, { type: 'boolean' }, str] }),
    expect: [['response-variant-added', 'breaking', `${RES}/anyOf/1`]],
  },
  {
    name: 'a widened response bound is a warning (a client may rely on it); a narrowed one is info',
    before: getThing(obj({ a: { type: 'string', maxLength: 10 }, b: { type: 'string', maxLength: 10 } })),
    after: getThing(obj({ a: { type: 'string', maxLength: 20 }, b: { type: 'string', maxLength: 5 } })),
    expect: [
      ['response-constraint-widened', 'warning', `${RES}/properties/a`],
      ['response-constraint-narrowed', 'info', `${RES}/properties/b`],
    ],
  },
  {
    name: 'a format given to a request value is breaking, one taken away is not',
    before: postThing(obj({ a: str, b: { type: 'string', format: 'date' } })),
    after: postThing(obj({ a: { type: 'string', format: 'date' }, b: str })),
    expect: [
      ['request-format-changed', 'breaking', `${REQ}/properties/a`],
      ['request-format-removed', 'info', `${REQ}/properties/b`],
    ],
  },
  {
    name: 'in a response, a format taken away is breaking, one given is not',
    before: getThing(obj({ a: str, b: { type: 'string', format: 'date' } })),
    after: getThing(obj({ a: { type: 'string', format: 'date' }, b: str })),
    expect: [
      ['response-format-added', 'info', `${RES}/properties/a`],
      ['response-format-changed', 'breaking', `${RES}/properties/b`],
    ],
  },
  {
    name: 'a request value that no longer accepts null, or other fields, is breaking',
    before: postThing(obj({ a: { type: ['string', 'null'] } })),
    after: postThing(obj({ a: str }, [], { additionalProperties: false })),
    expect: [
      ['request-null-refused', 'breaking', `${REQ}/properties/a`],
      ['request-additional-fields-refused', 'breaking', REQ],
    ],
  },
  {
    name: 'a removed request body is breaking',
    before: postThing(obj({})),
    after: { '/things': { post: { operationId: 'createThing', responses: { '201': { description: 'created' } } } } },
    expect: [['request-body-removed', 'breaking', '/paths/~1things/post/requestBody']],
  },
  {
    name: 'an optional query parameter that became required is breaking; a removed response header is breaking',
    before: getThing(obj({}), {
      parameters: [
        { name: 'id', in: 'path', required: true, schema: str },
        { name: 'q', in: 'query', schema: str },
      ],
      responses: { '200': { description: 'ok', headers: { 'X-Rate': { schema: str } } } },
    }),
    after: getThing(obj({}), {
      parameters: [
        { name: 'id', in: 'path', required: true, schema: str },
        { name: 'q', in: 'query', required: true, schema: str },
      ],
      responses: { '200': { description: 'ok' } },
    }),
    expect: [
      ['parameter-became-required', 'breaking', '/paths/~1things~1{id}/get/parameters/q'],
      ['response-header-removed', 'breaking', '/paths/~1things~1{id}/get/responses/200/headers/X-Rate'],
    ],
  },
  {
    name: 'outside operations: info text, servers, security schemes (a renamed API key header is breaking)',
    before: doc(
      {},
      {},
      {
        servers: [{ url: 'http://a.example' }],
        components: {
          securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'X-Token' }, basic: { type: 'http', scheme: 'basic' } },
        },
      },
    ),
    after: doc(
      {},
      {},
      {
        info: { title: 't', version: '1.0.0', description: 'now described' },
        servers: [{ url: 'http://b.example' }],
        components: { securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
      },
    ),
    expect: [
      ['api-description-changed', 'info', '/info'],
      ['server-removed', 'warning', '/servers'],
      ['server-added', 'info', '/servers'],
      ['security-scheme-changed', 'breaking', '/components/securitySchemes/token'],
      ['security-scheme-removed', 'warning', '/components/securitySchemes/basic'],
    ],
  },
]; // The $ref rows need their components: the shared Thing (b removed later) and allOf's Base.
rows[25]!.before = doc(rows[25]!.before, { Thing: obj({ a: str, b: str }) });
rows[25]!.after = doc(rows[25]!.after, { Thing: obj({ a: str }) });
rows[26]!.after = doc(rows[26]!.after, { Base: obj({ a: str }, ['a']) });

for (const row of rows) {
  t.test(row.name, async (t) => {
    const before = 'openapi' in row.before ? row.before : doc(row.before);
    const after = 'openapi' in row.after ? row.after : doc(row.after);
    const { changes } = await diffSpecs(before, after);
    t.same(
      changes.map((c) => [c.id, c.severity, c.pointer]),
      row.expect,
    );
    t.ok(
      changes.every((c) => c.message.length > 0 && !c.message.includes('\n')),
      'every change is one plain line',
    );
  });
}

t.test('a recursive schema is compared without looping', async (t) => {
  const node = (extra: Obj) => ({ Node: obj({ child: { $ref: '#/components/schemas/Node' }, ...extra }) });
  const { changes } = await diffSpecs(
    doc(getThing({ $ref: '#/components/schemas/Node' }), node({ a: str })),
    doc(getThing({ $ref: '#/components/schemas/Node' }), node({})),
  );
  t.ok(
    changes.some((c) => c.id === 'response-field-removed' && c.pointer === `${RES}/properties/a`),
    'the removed field is found',
  );
});

t.test('YAML text is read and its version reported', async (t) => {
  const text = (version: string) => `openapi: 3.1.0\ninfo: {title: t, version: '${version}'}\npaths: {}\n`;
  t.same((await diffSpecs(text('1.2.0'), text('2.0.0'))).version, { before: '1.2.0', after: '2.0.0' });
});

t.test('an external $ref is refused in one line naming it and where it is, never read', async (t) => {
  // Followed, this file ref would be read (swagger-parser reads file refs relative to the cwd, whatever commit the text is from).
  const dir = t.testdir({ 'thing.yaml': 'Thing: {type: object, properties: {a: {type: string}}}\n' });
  const fileRef = `${join(dir, 'thing.yaml')}#/Thing`;
  await t.rejects(
    diffSpecs(doc(getThing(obj({ a: str }))), doc(getThing({ $ref: fileRef })), { before: 'at abc', after: 'in the working tree' }),
    {
      message: `in the working tree: external $ref '${fileRef}' at ${RES}: spec-diff compares self-contained specs only (it does not follow refs to other files or URLs)`,
    },
  );
  const httpRef = 'https://example.com/thing.yaml';
  await t.rejects(diffSpecs(doc({}, { Thing: { $ref: httpRef } }), doc({})), {
    message: `(before): external $ref '${httpRef}' at /components/schemas/Thing: spec-diff compares self-contained specs only (it does not follow refs to other files or URLs)`,
  });
});

t.test('changes are worded from their operation and their place, never as JSON pointers', async (t) => {
  const before = doc(
    {
      '/api/charts': {
        post: {
          operationId: 'createChart',
          parameters: [],
          requestBody: { required: true, ...json(obj({ name: str, position: obj({ lat: { type: 'number' } }) })) },
          responses: {
            '201': {
              description: 'created',
              headers: { 'X-Rate': { schema: str } },
              ...json(obj({ items: { type: 'array', items: obj({ name: str }) } })),
            },
          },
        },
      },
    },
    {},
    { servers: [{ url: 'http://a.example' }] },
  );
  const after = doc({
    '/api/charts': {
      post: {
        operationId: 'createChart',
        parameters: [{ name: 'limit', in: 'query', required: true, schema: { type: 'integer' } }],
        requestBody: { required: true, ...json(obj({ name: str, position: obj({ lat: str }) }, ['name'])) },
        responses: { '201': { description: 'created', ...json(obj({ items: { type: 'array', items: obj({}) } })) } },
      },
    },
  });
  const { changes } = await diffSpecs(before, after);
  t.same(changes.map(formatChange), [
    'POST /api/charts: required query parameter "limit" added',
    'POST /api/charts: request field "name" became required',
    'POST /api/charts: request field "position.lat" type changed from number to string',
    'POST /api/charts: response 201 field "items[].name" removed',
    'POST /api/charts: response 201 header "X-Rate" removed',
    'spec-wide: server http://a.example removed',
  ]);
  t.same(changes[0]!.operation, { method: 'POST', path: '/api/charts', operationId: 'createChart' });
  t.notOk(
    changes.some((c) => c.message.includes('~1') || c.message.includes('/paths')),
    'no JSON pointer in a message',
  );
});
