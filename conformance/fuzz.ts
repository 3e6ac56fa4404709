import fc from 'fast-check';
import { checkAnswer, serverErrorViolation } from './answer-check.ts';
import { operationHeaders, throughGateway, type EngineContext } from './engine-context.ts';
import type { FuzzResult, Violation } from './model.ts';
import type { Where } from './operation-check.ts';
import { bodyMedia, exampleParts, operationParameters, renderRequest, type RequestParts } from './request-parts.ts';
import { curlCommand } from './reproduce.ts';
import { describeRequest } from './request-summary.ts';
import { schemaArbitrary } from './schema-arbitrary.ts';
import type { SpecOperation } from './spec-set.ts';

type Generated = { path: Record<string, unknown>; query: Record<string, unknown>; body: { value: unknown } | undefined };

class ContractBroken extends Error {
  readonly violations: Violation[];
  constructor(violations: Violation[]) {
    super(violations.map((v) => `${v.check}${v.pointer ? ` at ${v.pointer}` : ''}: ${v.message}`).join('; '));
    this.violations = violations;
  }
}

/** A seed per operation from the run's seed, so one operation's fuzzing does not shift another's. */
export function operationSeed(runSeed: number, operationId: string, role: string): number {
  let hash = 2166136261 ^ runSeed;
  for (const c of `${operationId}@${role}`) hash = Math.imul(hash ^ c.charCodeAt(0), 16777619);
  return hash | 0;
}

/**
 * Fuzzes one operation with requests generated from its parameter and body schemas (mostly valid,
 * sometimes any JSON and any text): every answer must be declared and conforming, and never a 5xx.
 * Seeded and reproducible; a failure carries the seed, fast-check's path and the shrunk request.
 */
export async function fuzzOperation(
  ctx: EngineContext,
  target: SpecOperation,
  where: Where,
  runs: number,
  runSeed: number,
): Promise<FuzzResult> {
  const { spec, op } = target;
  const seed = operationSeed(runSeed, op.operationId, where.role);
  const result: FuzzResult = { interface: spec.name, operationId: op.operationId, role: where.role, outcome: 'pass', runs, seed };
  const plan = await ctx.auth.plan(target);
  if (plan.kind === 'unavailable') return { ...result, outcome: plan.notImplemented ? 'not-implemented' : 'skipped', reason: plan.reason };
  const headers = operationHeaders(ctx, op.operationId);
  const base = exampleParts(spec.document, op);
  Object.assign(base.headers, headers);
  if (plan.kind === 'ready') plan.apply(base);

  const toParts = (g: Generated): RequestParts => {
    const parts: RequestParts = structuredClone(base);
    Object.assign(parts.path, g.path);
    parts.query = { ...parts.query, ...g.query };
    if (g.body && parts.body && !('raw' in parts.body)) parts.body = { mediaType: parts.body.mediaType, value: g.body.value };
    return parts;
  };

  const property = fc.asyncProperty(requestArbitrary(target), async (generated) => {
    const request = await renderRequest(where.url, op, toParts(generated));
    let res;
    try {
      res = await ctx.http.send(request);
    } catch (error) {
      throw new ContractBroken([
        { interface: spec.name, operationId: op.operationId, check: 'transport', pointer: '', message: (error as Error).message },
      ]);
    }
    const verdict = checkAnswer(ctx.specs, target, res, throughGateway(ctx, where.role, where.url), ctx.observe);
    const violations = [...verdict.violations];
    const serverError = serverErrorViolation(target, res.status);
    if (serverError) violations.push(serverError);
    if (violations.length > 0) throw new ContractBroken(violations);
  });
  const details = await fc.check(property, { seed, numRuns: runs });
  if (!details.failed) return result;
  const shrunk = details.counterexample?.[0] as Generated | undefined;
  const rendered = shrunk ? await renderRequest(where.url, op, toParts(shrunk)) : undefined;
  const request = rendered ? describeRequest(rendered) : '(no counterexample)';
  const error = details.errorInstance;
  const violations =
    error instanceof ContractBroken
      ? error.violations
      : [{ interface: spec.name, operationId: op.operationId, check: 'transport' as const, pointer: '', message: String(error) }];
  const reproduce = rendered ? { reproduce: curlCommand(rendered, ctx.auth.secrets()) } : {};
  return { ...result, outcome: 'fail', failure: { path: details.counterexamplePath ?? '', request, ...reproduce, violations } };
}

/** Path parameters, query parameters and body of an operation as one arbitrary. */
function requestArbitrary(target: SpecOperation): fc.Arbitrary<Generated> {
  const { document } = target.spec;
  const params = operationParameters(document, target.op);
  const anyText = fc.string({ minLength: 1, maxLength: 24 }).filter((s) => s !== '.' && s !== '..');
  const path = fc.record(
    Object.fromEntries(
      params
        .filter((p) => p.in === 'path')
        .map((p) => [p.name, fc.oneof({ arbitrary: schemaArbitrary(document, p.schema), weight: 3 }, { arbitrary: anyText, weight: 1 })]),
    ),
  );
  const query = fc.record(
    Object.fromEntries(
      params
        .filter((p) => p.in === 'query')
        .map((p) => [p.name, fc.oneof({ arbitrary: schemaArbitrary(document, p.schema), weight: 3 }, { arbitrary: anyText, weight: 1 })]),
    ),
    { requiredKeys: [] },
  );
  const media = bodyMedia(document, target.op)[0];
  let body: fc.Arbitrary<Generated['body']> = fc.constant(undefined);
  if (media && media.mediaType !== 'multipart/form-data') {
    const fromSchema = schemaArbitrary(document, media.schema ?? {});
    const anything =
      media.mediaType === 'application/x-www-form-urlencoded'
        ? fc.dictionary(fc.string({ maxLength: 12 }), fc.string({ maxLength: 24 }), { maxKeys: 4 })
        : fc.jsonValue({ maxDepth: 3 });
    body = fc.oneof({ arbitrary: fromSchema, weight: 3 }, { arbitrary: anything, weight: 1 }).map((value) => ({ value }));
  }
  return fc.record({ path, query, body }).map((g) => ({ path: { ...g.path }, query: { ...g.query }, body: g.body }));
}
