import type { Observation } from './answer-check.ts';
import type { Authenticator } from './auth.ts';
import type { OperationData } from './data-files.ts';
import type { HttpClient } from './http.ts';
import { interpolate, type Scope } from './interpolate.ts';
import type { SpecOperation, SpecSet } from './spec-set.ts';
import { resolveTarget, type TargetMap } from './targets.ts';

/** Everything the checks, scenarios and fuzzing of one run share (one per target). */
export type EngineContext = {
  specs: SpecSet;
  http: HttpClient;
  auth: Authenticator;
  /** Variables: data/variables.yaml, `--var`s, `runId`, `credentials.<name>.*`. */
  scope: Scope;
  /** The `--var`s alone: they win over a scenario's own variables too. */
  overrides: Scope;
  operationData: Record<string, OperationData>;
  targets: TargetMap;
  safe: boolean;
  /** The target keeps no state (a mock): no wrong credentials are sent, it has no accounts to check them against. */
  stateless: boolean;
  /** Nothing that writes to the target is sent (writesReason): operations and scenarios that would are skipped. */
  readOnly: boolean;
  /**
   * The time limit of a probe the target is known never to answer (a known failure of check `transport`),
   * shorter than the run's; undefined for any other probe.
   */
  noAnswerDeadline(operationKey: string, probeLabel: string): number | undefined;
  observe(observation: Observation): void;
};

/** Why an operation is destructive (never sent in safe mode), or undefined. */
export function destructiveReason(ctx: Pick<EngineContext, 'operationData'>, target: SpecOperation): string | undefined {
  const { op } = target;
  if (op.method === 'delete') return 'a DELETE operation';
  const marked = op.operation['x-portolan-destructive'];
  if (marked) return typeof marked === 'string' ? marked : 'marked x-portolan-destructive in its spec';
  return ctx.operationData[op.operationId]?.destructive;
}

const READ_METHODS = new Set(['get', 'head', 'options']);

/**
 * Why an operation writes to the target (never sent in a read-only run), or undefined: a destructive
 * one (destructiveReason), one data/operations.yaml says `writes`, or any other method than GET, HEAD
 * and OPTIONS unless data/operations.yaml says it `reads` (a login).
 */
export function writesReason(ctx: Pick<EngineContext, 'operationData'>, target: SpecOperation): string | undefined {
  const data = ctx.operationData[target.op.operationId];
  const destructive = destructiveReason(ctx, target);
  if (destructive) return destructive;
  if (data?.writes) return data.writes;
  if (READ_METHODS.has(target.op.method) || data?.reads) return undefined;
  return `a ${target.op.method.toUpperCase()} request`;
}

/** Headers data/operations.yaml adds to every request of an operation, variables filled in. */
export function operationHeaders(ctx: Pick<EngineContext, 'operationData' | 'scope'>, operationId: string): Record<string, string> {
  const headers = ctx.operationData[operationId]?.headers ?? {};
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), String(interpolate(v, ctx.scope))]));
}

/** Whether a request goes through the gateway (so the gateway responses may answer it). */
export function throughGateway(ctx: Pick<EngineContext, 'targets'>, role: string, url: string): boolean {
  return role === 'gateway' || url === resolveTarget(ctx.targets, 'rate-limit', 'gateway');
}

/** The base URL of an operation on its first targeted role (scenario steps may name another role). */
export function urlOf(
  ctx: Pick<EngineContext, 'targets'>,
  target: SpecOperation,
  role?: string,
): { role: string; url: string } | undefined {
  if (role) {
    // A step that names a role goes to that role (e.g. a mapping operation through the gateway).
    const url = ctx.targets[role] ?? ctx.targets['*'];
    return url ? { role, url } : undefined;
  }
  for (const r of target.op.roles) {
    const url = resolveTarget(ctx.targets, target.spec.name, r);
    if (url) return { role: r, url };
  }
  return undefined;
}
