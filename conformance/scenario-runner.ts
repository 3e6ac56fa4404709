import { isDeepStrictEqual } from 'node:util';
import { getAtPointer } from '../src/lib/contract/json-pointer.ts';
import { checkAnswer, serverErrorViolation } from './answer-check.ts';
import { destructiveReason, operationHeaders, throughGateway, urlOf, writesReason, type EngineContext } from './engine-context.ts';
import { checkExpectations, type ExampleLookup } from './expectations.ts';
import type { HttpRequest, HttpResponse } from './http.ts';
import { interpolate, SetupError, type Scope } from './interpolate.ts';
import type { ScenarioResult, StepResult, Violation } from './model.ts';
import { bodyExamples, bodyMedia, exampleParts, findExample, renderRequest, type RequestParts } from './request-parts.ts';
import { curlCommand } from './reproduce.ts';
import type { LoadedScenario, Step, StepRequest } from './scenario-file.ts';
import type { SpecOperation } from './spec-set.ts';
import { withoutCredentials } from './targets.ts';

export type ScenarioOptions = {
  /** Interfaces the run covers (`--spec`); a scenario needing another is skipped. */
  interfaces: ReadonlySet<string>;
  /** Names of the credentials that are configured. */
  credentials: ReadonlySet<string>;
};

/**
 * Runs one scenario's steps in order against the targets. A step fails on its first answer that
 * breaks the spec or its expectations; the scenario stops there. An answer 501 makes the scenario
 * "not implemented" (never a pass). Nothing is faked: time is the target's real time.
 */
export async function runScenario(ctx: EngineContext, scenario: LoadedScenario, options: ScenarioOptions): Promise<ScenarioResult> {
  const result: ScenarioResult = {
    name: scenario.name,
    file: scenario.file,
    description: scenario.description,
    outcome: 'pass',
    steps: [],
  };
  const skip = whySkip(ctx, scenario, options);
  if (skip) return { ...result, outcome: 'skipped', reason: skip };

  let scope: Scope;
  try {
    // The scenario's defaults, then the run's `--var`s: a window or limit is set from the command line.
    scope = { ...ctx.scope, ...(interpolate(scenario.variables ?? {}, ctx.scope) as Scope), ...ctx.overrides };
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    return { ...result, outcome: 'fail', reason: `variables: ${error.message}` };
  }
  const examples = exampleLookup(ctx);
  for (const [index, step] of scenario.steps.entries()) {
    const id = `${scenario.name}#${index + 1} ${step.name}`;
    let outcome: StepResult;
    try {
      outcome = step.request ? await runRequestStep(ctx, id, step, step.request, scope, examples) : runAssertStep(id, step, scope);
    } catch (error) {
      if (!(error instanceof SetupError)) throw error;
      outcome = {
        id,
        name: step.name,
        operationId: step.request?.operationId,
        requests: 0,
        outcome: 'fail',
        violations: [setupViolation(step, error.message)],
      };
    }
    result.steps.push(outcome);
    if (outcome.outcome === 'not-implemented') {
      return { ...result, outcome: 'not-implemented', reason: `step ${index + 1} (${step.name}): ${outcome.operationId} answered 501` };
    }
    if (outcome.outcome === 'skipped')
      return { ...result, outcome: 'skipped', reason: `step ${index + 1} (${step.name}): ${outcome.violations[0]?.message ?? 'skipped'}` };
    if (outcome.outcome === 'fail') return { ...result, outcome: 'fail', reason: `step ${index + 1} (${step.name}) failed` };
  }
  return result;
}

/** The start of the reason of a scenario a read-only run skips (the summary counts them by it). */
export const SCENARIO_READ_ONLY_SKIP = 'not run: it writes to the target: ';

function whySkip(ctx: EngineContext, scenario: LoadedScenario, options: ScenarioOptions): string | undefined {
  const outside = scenario.requires.interfaces.filter((i) => !options.interfaces.has(i));
  if (outside.length > 0) return `needs interface ${outside.join(', ')} (not selected)`;
  const missing = (scenario.requires.credentials ?? []).filter((c) => !options.credentials.has(c));
  if (missing.length > 0) return `needs credential ${missing.join(', ')} (see conformance/data/auth.yaml)`;
  for (const step of scenario.steps) {
    if (!step.request) continue;
    const target = ctx.specs.find(step.request.operationId);
    if (!target) continue; // reported when the step runs
    if (!urlOf(ctx, target, step.request.role))
      return `no target for ${step.request.role ?? target.op.roles.join('/')} (${target.op.operationId})`;
    const destructive = destructiveReason(ctx, target);
    if (ctx.safe && (scenario.requires.destructive || destructive)) {
      return `safe mode: ${scenario.requires.destructive ? 'the scenario is destructive' : `step '${step.name}' calls ${target.op.operationId} (${destructive})`}`;
    }
    const writes = writesReason(ctx, target);
    if (ctx.readOnly && writes) return `${SCENARIO_READ_ONLY_SKIP}step '${step.name}' calls ${target.op.operationId} (${writes})`;
  }
  if (ctx.safe && scenario.requires.destructive) return 'safe mode: the scenario is destructive';
  return undefined;
}

async function runRequestStep(
  ctx: EngineContext,
  id: string,
  step: Step,
  request: StepRequest,
  scope: Scope,
  examples: ExampleLookup,
): Promise<StepResult> {
  const target = ctx.specs.find(request.operationId);
  if (!target) throw new SetupError(`operation ${request.operationId} is in no spec`);
  const where = urlOf(ctx, target, request.role)!;
  const result: StepResult = { id, name: step.name, operationId: target.op.operationId, requests: 0, outcome: 'pass', violations: [] };
  const times = positive('repeat', interpolate(step.repeat ?? 1, scope));
  const poll = step.poll
    ? {
        every: positive('poll.every', interpolate(step.poll.every, scope)),
        max: positive('poll.max', interpolate(step.poll.max, scope)),
        while: interpolate(step.poll.while, scope) as NonNullable<Step['expect']>,
      }
    : undefined;
  if (poll && step.repeat !== undefined) throw new SetupError('a step either repeats or polls, not both');

  const plan = request.auth === false ? undefined : await ctx.auth.plan(target);
  if (plan?.kind === 'unavailable') {
    return {
      ...result,
      outcome: plan.notImplemented ? 'not-implemented' : 'skipped',
      violations: [setupViolation(step, `no credentials: ${plan.reason}`, target)],
    };
  }
  const parts = await stepParts(ctx, target, request, scope);
  if (plan?.kind === 'ready') plan.apply(parts);
  const rendered = await renderRequest(where.url, target.op, parts);
  const expect = interpolate(step.expect ?? {}, scope) as NonNullable<Step['expect']>;

  if (step.concurrently !== undefined) {
    if (poll || step.repeat !== undefined) throw new SetupError('a concurrent step neither repeats nor polls');
    return runConcurrently(ctx, step, target, where, rendered, expect, result, scope, examples);
  }

  let last: HttpResponse | undefined;
  const count = poll ? poll.max : times;
  for (let i = 0; i < count; i++) {
    const which = count > 1 ? `request ${i + 1} of ${count}: ` : '';
    result.requests++;
    try {
      last = await ctx.http.send(rendered);
    } catch (error) {
      return {
        ...result,
        outcome: 'fail',
        violations: [
          violation(target, 'transport', '', withoutCredentials(`${which}no answer from ${where.url}: ${(error as Error).message}`)),
        ],
        reproduce: curlCommand(rendered, ctx.auth.secrets()),
      };
    }
    result.status = last.status;
    if (last.status === 501) return { ...result, outcome: 'not-implemented' };
    const verdict = checkAnswer(ctx.specs, target, last, throughGateway(ctx, where.role, where.url), ctx.observe);
    result.shape = verdict.shape;
    const violations: Violation[] = verdict.violations.map((v) => ({ ...v, message: `${which}${v.message}` }));
    const serverError = serverErrorViolation(target, last.status);
    if (serverError && !wanted(expect.status, last.status)) violations.push({ ...serverError, message: `${which}${serverError.message}` });
    const misses = checkExpectations(last, expect, examples);
    if (poll && misses.length > 0 && violations.length === 0) {
      // Not there yet: the answer must say so the way `while` describes, then ask again.
      const notYet = checkExpectations(last, poll.while, examples);
      if (notYet.length === 0 && i < count - 1) {
        await new Promise((resolve) => setTimeout(resolve, poll.every));
        continue;
      }
      if (notYet.length === 0) misses.unshift({ pointer: '', message: `still not done after ${count} requests ${poll.every} ms apart` });
    }
    for (const m of misses) violations.push(violation(target, 'expectation', m.pointer, `${which}${m.message}`));
    if (violations.length > 0) return { ...result, outcome: 'fail', violations, reproduce: curlCommand(rendered, ctx.auth.secrets()) };
    if (poll) break;
  }
  for (const [name, from] of Object.entries(step.capture ?? {})) scope[name] = capture(last!, from, name);
  return result;
}

/** Sends `concurrently` copies at once (as far as the transport allows); each answer must meet `expect`. */
async function runConcurrently(
  ctx: EngineContext,
  step: Step,
  target: SpecOperation,
  where: { role: string; url: string },
  rendered: HttpRequest,
  expect: NonNullable<Step['expect']>,
  result: StepResult,
  scope: Scope,
  examples: ExampleLookup,
): Promise<StepResult> {
  const count = positive('concurrently', interpolate(step.concurrently, scope));
  const settled = await Promise.allSettled(Array.from({ length: count }, () => ctx.http.send(rendered)));
  result.requests += count;
  const violations: Violation[] = [];
  const answers: HttpResponse[] = [];
  for (const [i, outcome] of settled.entries()) {
    const which = `request ${i + 1} of ${count}: `;
    if (outcome.status === 'rejected') {
      violations.push(
        violation(target, 'transport', '', withoutCredentials(`${which}no answer from ${where.url}: ${(outcome.reason as Error).message}`)),
      );
      continue;
    }
    const answer = outcome.value;
    answers.push(answer);
    if (answer.status === 501) return { ...result, status: 501, outcome: 'not-implemented' };
    const verdict = checkAnswer(ctx.specs, target, answer, throughGateway(ctx, where.role, where.url), ctx.observe);
    violations.push(...verdict.violations.map((v) => ({ ...v, message: `${which}${v.message}` })));
    for (const m of checkExpectations(answer, expect, examples))
      violations.push(violation(target, 'expectation', m.pointer, `${which}${m.message}`));
  }
  // No single status stands for the step: which copies win a race differs from run to run (and
  // between two targets compared with --compare), so none is recorded.
  const chosen = answers.at(-1);
  if (violations.length > 0) return { ...result, outcome: 'fail', violations, reproduce: curlCommand(rendered, ctx.auth.secrets()) };
  for (const [name, from] of Object.entries(step.capture ?? {})) scope[name] = capture(chosen!, from, name);
  return result;
}

function positive(what: string, value: unknown): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new SetupError(`${what} must be a positive integer, got ${String(value)}`);
  return n;
}

function runAssertStep(id: string, step: Step, scope: Scope): StepResult {
  const violations: Violation[] = [];
  for (const { equal } of step.assert ?? []) {
    const [a, b] = interpolate(equal, scope) as [unknown, unknown];
    if (!isDeepStrictEqual(a, b) && String(a) !== String(b)) {
      violations.push({
        interface: '-',
        operationId: '-',
        check: 'expectation',
        pointer: '',
        message: `${JSON.stringify(equal[0])} is ${JSON.stringify(a)}, expected it to equal ${JSON.stringify(equal[1])} (${JSON.stringify(b)})`,
      });
    }
  }
  return { id, name: step.name, requests: 0, outcome: violations.length > 0 ? 'fail' : 'pass', violations };
}

/** The request of a step: the operation's example request, then the step's params, query, headers and body. */
async function stepParts(ctx: EngineContext, target: SpecOperation, request: StepRequest, scope: Scope): Promise<RequestParts> {
  const { document } = target.spec;
  let body: { mediaType: string; value: unknown } | undefined;
  if (request.bodyExample !== undefined) {
    body = bodyExamples(document, target.op).find(
      (e) => e.name === request.bodyExample && (!request.contentType || e.mediaType === request.contentType),
    );
    if (!body) throw new SetupError(`${target.op.operationId} has no request example '${request.bodyExample}'`);
  } else if (request.body !== undefined) {
    const mediaType = request.contentType ?? bodyMedia(document, target.op)[0]?.mediaType ?? 'application/json';
    body = { mediaType, value: interpolate(request.body, scope) };
  }
  const parts = exampleParts(document, target.op, body);
  if (request.rawBody !== undefined) {
    const raw = interpolate(request.rawBody, scope);
    const mediaType = request.contentType ?? bodyMedia(document, target.op)[0]?.mediaType ?? 'application/octet-stream';
    parts.body = { mediaType, raw: typeof raw === 'string' ? raw : fill(raw as { fill: string; bytes: unknown }) };
  }
  Object.assign(parts.path, interpolate(request.params ?? {}, scope));
  Object.assign(parts.query, interpolate(request.query ?? {}, scope));
  Object.assign(parts.headers, operationHeaders(ctx, target.op.operationId));
  for (const [name, value] of Object.entries(interpolate(request.headers ?? {}, scope) as Record<string, unknown>))
    parts.headers[name.toLowerCase()] = String(value);
  return parts;
}

function fill(spec: { fill: string; bytes: unknown }): Uint8Array {
  const bytes = Number(spec.bytes);
  if (!Number.isInteger(bytes) || bytes < 1) throw new SetupError(`rawBody.bytes must be a positive integer, got ${String(spec.bytes)}`);
  return new Uint8Array(Buffer.alloc(bytes, spec.fill));
}

function capture(res: HttpResponse, how: string | { from: string; match: string }, name: string): unknown {
  const from = typeof how === 'string' ? how : how.from;
  const value =
    from === 'status'
      ? res.status
      : from.startsWith('header:')
        ? res.headers[from.slice('header:'.length).toLowerCase()]
        : getAtPointer(res.body, from);
  if (value === undefined) throw new SetupError(`capture ${name}: nothing at ${from}`);
  if (typeof how === 'string') return value;
  const match = new RegExp(how.match).exec(String(value));
  if (!match) throw new SetupError(`capture ${name}: ${from} does not match /${how.match}/`);
  return match[1] ?? match[0];
}

function exampleLookup(ctx: EngineContext): ExampleLookup {
  return (reference) => {
    const [operationId, status, name, pointer = ''] = reference.split(/\s+/);
    const target = operationId ? ctx.specs.find(operationId) : undefined;
    if (!target || !status || !name)
      throw new SetupError(`$example '${reference}': expected '<operationId> <status|request> <example name> [pointer]'`);
    const found = findExample(target.spec.document, target.op, status, name);
    if (!found.found) throw new SetupError(`$example '${reference}': ${operationId} has no ${status} example '${name}'`);
    return getAtPointer(found.value, pointer);
  };
}

const wanted = (status: number | number[] | undefined, actual: number) =>
  status !== undefined && (Array.isArray(status) ? status.includes(actual) : status === actual);

function violation(target: SpecOperation, check: Violation['check'], pointer: string, message: string): Violation {
  return { interface: target.spec.name, operationId: target.op.operationId, check, pointer, message };
}

function setupViolation(step: Step, message: string, target?: SpecOperation): Violation {
  return {
    interface: target?.spec.name ?? '-',
    operationId: target?.op.operationId ?? step.request?.operationId ?? '-',
    check: 'setup',
    pointer: '',
    message,
  };
}
