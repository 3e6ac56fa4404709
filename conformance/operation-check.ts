import { checkAnswer, serverErrorViolation } from './answer-check.ts';
import { destructiveReason, operationHeaders, throughGateway, writesReason, type EngineContext } from './engine-context.ts';
import { invalidRequests } from './invalid-requests.ts';
import { operationKey, probeLabel } from './known-failures.ts';
import type { OperationResult, ProbeResult, Violation } from './model.ts';
import { curlCommand } from './reproduce.ts';
import { bodyExamples, cloneParts, exampleParts, renderRequest, type RequestParts } from './request-parts.ts';
import type { SpecOperation } from './spec-set.ts';
import { withoutCredentials } from './targets.ts';

export type Where = { role: string; url: string };

type Expectation = { kind: ProbeResult['kind']; name: string; pointer: string; refuse: boolean };

/**
 * Checks one operation on one target: (1) valid requests from every example must get a declared,
 * conforming answer that is no 5xx (a declared 400 or 404 is fine: an example may name an object the
 * target does not have); 501 means not implemented; (2) invalid requests and
 * requests without (or, outside safe and stateless mode, with wrong) credentials must get a declared 4xx.
 */
export async function checkOperation(ctx: EngineContext, target: SpecOperation, where: Where): Promise<OperationResult> {
  const { spec, op } = target;
  const result: OperationResult = {
    interface: spec.name,
    operationId: op.operationId,
    method: op.method.toUpperCase(),
    path: op.path,
    role: where.role,
    url: where.url,
    outcome: 'pass',
    probes: [],
  };
  const destructive = destructiveReason(ctx, target);
  if (ctx.safe && destructive) return { ...result, outcome: 'skipped', reason: `safe mode: ${destructive}` };
  const writes = writesReason(ctx, target);
  if (ctx.readOnly && writes) return { ...result, outcome: 'skipped', reason: `${READ_ONLY_SKIP}${writes}` };

  const plan = await ctx.auth.plan(target);
  const headers = operationHeaders(ctx, op.operationId);
  const examples = bodyExamples(spec.document, op);
  const several = new Set(examples.map((e) => e.mediaType)).size > 1;
  const valid = (examples.length > 0 ? examples : [undefined]).map((example) => {
    const parts = exampleParts(spec.document, op, example);
    Object.assign(parts.headers, headers);
    const name = example ? `example '${example.name}'${several ? ` (${example.mediaType})` : ''}` : 'example request';
    return { name, unauthenticated: cloneParts(parts), parts };
  });
  const authenticate = (parts: RequestParts) => {
    if (plan.kind === 'ready') plan.apply(parts);
    return parts;
  };

  for (const v of valid)
    result.probes.push(await probe(ctx, target, where, authenticate(v.parts), { kind: 'valid', name: v.name, pointer: '', refuse: false }));
  const answered = result.probes.filter((p) => p.status !== undefined && p.status !== 501);
  if (answered.length === 0 && result.probes.some((p) => p.outcome === 'not-implemented')) {
    return { ...result, outcome: 'not-implemented', reason: 'answers 501' };
  }
  // Some examples answered 501 and others did not: the 501s are then undeclared answers.
  for (const p of result.probes.filter((p) => p.outcome === 'not-implemented')) {
    p.outcome = 'fail';
    p.violations.push(violation(target, 'status', '', 'answered 501 to this example while other examples were answered'));
  }
  if (plan.kind === 'unavailable') {
    if (plan.notImplemented) return { ...result, outcome: 'not-implemented', reason: plan.reason };
    for (const p of result.probes) p.outcome = 'skipped';
    return { ...result, outcome: 'skipped', reason: `no credentials: ${plan.reason}` };
  }

  const first = valid[0]!;
  if (plan.kind === 'ready') {
    const without = await probe(ctx, target, where, cloneParts(first.unauthenticated), {
      kind: 'auth',
      name: 'no credentials',
      pointer: '',
      refuse: true,
    });
    result.probes.push(without);
    // Valid requests refused exactly like one without credentials: ours were wrong, nothing was tested.
    // Unless the refusal itself breaks the spec (an undeclared 401): that is a finding, not a skip.
    const conforming = [without, ...answered].every((p) => p.violations.length === 0);
    if (
      without.status !== undefined &&
      [401, 403].includes(without.status) &&
      answered.every((p) => p.status === without.status) &&
      conforming
    ) {
      return {
        ...result,
        outcome: 'skipped',
        reason: `the credentials were refused: valid requests got ${without.status}, like a request without credentials`,
      };
    }
  }
  for (const invalid of invalidRequests(spec, op, first.unauthenticated)) {
    result.probes.push(
      await probe(ctx, target, where, authenticate(invalid.parts), {
        kind: 'invalid',
        name: invalid.name,
        pointer: invalid.pointer,
        refuse: true,
      }),
    );
  }
  if (plan.kind === 'ready') {
    // Wrong passwords can lock a real account: safe mode sends none. A stateless mock has no accounts
    // to check a password against (Prism only checks that one is there): it is not asked.
    if (plan.wrong && !ctx.safe && !ctx.stateless) {
      const parts = cloneParts(first.unauthenticated);
      plan.wrong(parts);
      result.probes.push(await probe(ctx, target, where, parts, { kind: 'auth', name: 'wrong credentials', pointer: '', refuse: true }));
    }
  }
  result.outcome = result.probes.some((p) => p.outcome === 'fail') ? 'fail' : 'pass';
  return result;
}

/** The start of the reason of an operation a read-only run skips (the summary counts them by it). */
export const READ_ONLY_SKIP = 'not sent: it writes to the target: ';

async function probe(
  ctx: EngineContext,
  target: SpecOperation,
  where: Where,
  parts: RequestParts,
  expect: Expectation,
): Promise<ProbeResult> {
  const id = `${target.spec.name}.${target.op.operationId}@${where.role} ${expect.kind}: ${expect.name}`;
  const base: ProbeResult = { id, kind: expect.kind, name: expect.name, outcome: 'pass', violations: [] };
  const request = await renderRequest(where.url, target.op, parts);
  const deadline = ctx.noAnswerDeadline(
    operationKey({ interface: target.spec.name, operationId: target.op.operationId, role: where.role }),
    probeLabel(expect),
  );
  if (deadline !== undefined) request.timeoutMs = deadline;
  const reproduce = () => curlCommand(request, ctx.auth.secrets());
  let res;
  try {
    res = await ctx.http.send(request);
  } catch (error) {
    const why =
      deadline !== undefined
        ? `no answer within ${deadline} ms (known never to answer this request: the wait is cut short)`
        : (error as Error).message;
    return {
      ...base,
      outcome: 'fail',
      violations: [violation(target, 'transport', '', withoutCredentials(`no answer from ${where.url}: ${why}`))],
      reproduce: reproduce(),
    };
  }
  // Kept for a 501 too: it becomes a failure when other examples of the operation were answered.
  if (res.status === 501 && expect.kind === 'valid')
    return { ...base, outcome: 'not-implemented', status: 501, reason: 'answered 501', reproduce: reproduce() };
  const verdict = checkAnswer(ctx.specs, target, res, throughGateway(ctx, where.role, where.url), ctx.observe);
  const violations = [...verdict.violations];
  const serverError = serverErrorViolation(target, res.status);
  if (serverError) violations.push(serverError);
  if (expect.refuse && res.status < 400) {
    const what = expect.kind === 'auth' ? `a request with ${expect.name}` : `an invalid request (${expect.name})`;
    violations.push(violation(target, 'rejects-invalid', expect.pointer, `${what} was accepted with ${res.status}`));
  }
  return {
    ...base,
    status: res.status,
    violations,
    shape: verdict.shape,
    outcome: violations.length > 0 ? 'fail' : 'pass',
    ...(violations.length > 0 ? { reproduce: reproduce() } : {}),
  };
}

function violation(target: SpecOperation, check: Violation['check'], pointer: string, message: string): Violation {
  return { interface: target.spec.name, operationId: target.op.operationId, check, pointer, message };
}
