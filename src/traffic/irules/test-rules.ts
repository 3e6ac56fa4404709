// Runs rules in tests: a fake clock, a log kept in an array, a request built from a few fields.
import { compileRules } from './compile.ts';
import type { DataGroup, HeaderList, RuleBudget, RuleEnvironment, RuleEvent, RuleRequest, RuleResponse, RunOutcome } from './types.ts';

export const CONNECTION = { clientAddress: '192.0.2.10', clientPort: 40000, localAddress: '198.51.100.1', localPort: 80 };

export type TestEnvironment = RuleEnvironment & { lines: string[]; clock: { now: number } };

export function testEnvironment(
  options: { pools?: string[]; dataGroups?: Record<string, DataGroup>; tick?: number } = {},
): TestEnvironment {
  const lines: string[] = [];
  const clock = { now: 1000 };
  return {
    pools: new Set(options.pools ?? ['web_pool', 'api_pool']),
    dataGroups: new Map(Object.entries(options.dataGroups ?? {})),
    log: (rule, line) => lines.push(`${rule}: ${line}`),
    // Each reading of the clock moves it on by `tick` ms: a rule that runs long sees time pass.
    nowMs: () => (clock.now += options.tick ?? 0),
    lines,
    clock,
  };
}

export function request(uri = '/', headers: HeaderList = [['Host', 'www.example.com']], method = 'GET'): RuleRequest {
  return { method, uri, version: '1.1', headers };
}

/** Compiles the rules (throws on a refusal) and returns a session of them. */
export function sessionOf(texts: string | string[], environment = testEnvironment()) {
  const list = (Array.isArray(texts) ? texts : [texts]).map((text, i) => ({ name: `rule${i + 1}`, text }));
  const compiled = compileRules(list);
  if (!compiled.ok) throw new Error(compiled.refusal.message);
  return { session: compiled.rules.session(environment), environment, rules: compiled.rules };
}

export type RunOptions = {
  event?: RuleEvent;
  request?: RuleRequest;
  response?: RuleResponse;
  budget?: RuleBudget;
  environment?: TestEnvironment;
};

/** Runs one event of one or more rules: the outcome, the log and the request as the rules left it. */
export function runRules(texts: string | string[], options: RunOptions = {}) {
  const environment = options.environment ?? testEnvironment();
  const { session } = sessionOf(texts, environment);
  const target = { connection: CONNECTION, request: options.request ?? request(), response: options.response };
  const outcome: RunOutcome = session.run(options.event ?? 'HTTP_REQUEST', target, options.budget);
  return { outcome, lines: environment.lines, request: target.request, response: target.response };
}

/** The value of a Tcl script run in HTTP_REQUEST (as `if 1 {script}` gives it), read back from the log. */
export function evalTcl(script: string, options: RunOptions = {}): string {
  const { outcome, lines } = runRules(`when HTTP_REQUEST {\nlog [if 1 {${script}}]\n}`, options);
  if (outcome.kind === 'error') throw new Error(outcome.message);
  return lines.at(-1)!.replace(/^rule1: /, '');
}
