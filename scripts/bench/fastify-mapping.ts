// The mapping benchmark's framework anchor (issue 22): fastify 5 serving the three routes the benchmark
// loads with the request schemas of specs/mapping.yaml (its compiled contract, generated/mapping/contract.gen.json),
// validated by fastify's own ajv (ajv-formats on, as fastify ships it; `removeAdditional` off, so an unknown
// property is refused as the spec says rather than silently dropped). The vessels are the seed's, kept in
// memory; a created chart goes into a Map (no store, no durability). Errors in the mapping API's shape
// (`{status: "error", message}`). No logger (fastify's default), no response schema (answers are
// JSON.stringify'd, as Portolan's are). Prints `READY <url>`.
//
//   node scripts/bench/fastify-mapping.ts
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { VESSELS } from '../../src/interfaces/mapping/seed-data.ts';

type Schema = Record<string, unknown>;
type Parameter = { name: string; in: string; required?: boolean; schema: Schema };
type Operation = { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } };

const contract = JSON.parse(readFileSync(new URL('../../generated/mapping/contract.gen.json', import.meta.url), 'utf8')) as {
  dereferenced: { paths: Record<string, Record<string, Operation>> };
};
const paths = contract.dereferenced.paths;

/** An operation's path parameters as the one object schema fastify validates `params` with. */
function paramsSchema(operation: Operation): Schema {
  const parameters = (operation.parameters ?? []).filter((p) => p.in === 'path');
  return {
    type: 'object',
    properties: Object.fromEntries(parameters.map((p) => [p.name, p.schema])),
    required: parameters.filter((p) => p.required).map((p) => p.name),
  };
}

const app = Fastify({
  logger: false,
  // strict off: the spec's schemas carry OpenAPI keywords ajv does not know (`x-origin`, `example`).
  ajv: { customOptions: { removeAdditional: false, strict: false } },
});

app.setErrorHandler((error: { validation?: unknown; statusCode?: number; message: string }, _request, reply) => {
  if (error.validation) return reply.code(400).send({ status: 'error', message: `Invalid request: ${error.message}` });
  const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
  return reply.code(status).send({ status: 'error', message: status === 500 ? 'Internal server error' : error.message });
});

const summaries = VESSELS.map(({ id, type, crew, status }) => ({ id, type, crew, status }));
const byId = new Map(VESSELS.map((v) => [v.id, v]));
const charts = new Map<string, unknown>();

app.get('/api/vessels', async () => ({ status: 'success', data: summaries }));

app.get<{ Params: { vesselId: string } }>(
  '/api/vessels/:vesselId',
  { schema: { params: paramsSchema(paths['/api/vessels/{vesselId}']!.get!) } },
  async (request, reply) => {
    const vessel = byId.get(request.params.vesselId);
    if (!vessel) return reply.code(404).send({ status: 'error', message: `Vessel '${request.params.vesselId}' was not found.` });
    return { status: 'success', data: vessel };
  },
);

app.post<{ Body: Record<string, unknown> }>(
  '/api/charts',
  { schema: { body: paths['/api/charts']!.post!.requestBody!.content['application/json']!.schema } },
  async (request, reply) => {
    const id = randomUUID();
    charts.set(id, { ...request.body, id });
    return reply.code(201).send({ status: 'success', message: 'Chart created successfully', id });
  },
);

const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`READY ${url}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
