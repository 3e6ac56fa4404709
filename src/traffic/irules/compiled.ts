// A service's compiled rules and their runs: per connection, a session keeps the variables, the events
// disabled and the pool picked; per event, the handlers run in priority order and the outcome says what
// the data plane does next.
import { Dynamic } from './dynamic.ts';
import { type Connection, DEFAULT_BUDGET, Interp } from './interp.ts';
import type { Script } from './model.ts';
import { BREAK, BudgetError, CONTINUE, RETURN, TclError } from './signals.ts';
import type { CompiledRules, RuleEnvironment, RuleEvent, RuleSession, RunOutcome } from './types.ts';
import { VariableBoundError, Variables } from './variables.ts';

/** One `when` block of one rule. */
export type Handler = { rule: string; ruleIndex: number; order: number; event: RuleEvent; priority: number; body: Script };

const CONTINUE_OUTCOME: RunOutcome = { kind: 'continue' };

/** The rules of a service, ready to run: handlers by event, lower priority first, then rule order, then text order. */
export function makeCompiledRules(handlers: readonly Handler[]): CompiledRules {
  const byEvent = new Map<RuleEvent, Handler[]>();
  for (const handler of handlers) byEvent.set(handler.event, [...(byEvent.get(handler.event) ?? []), handler]);
  for (const list of byEvent.values()) list.sort((a, b) => a.priority - b.priority || a.ruleIndex - b.ruleIndex || a.order - b.order);
  const dynamic = new Dynamic();
  return {
    handles: (event) => byEvent.has(event),
    session(environment) {
      const state: Connection = { variables: new Variables(), disabled: new Set(), pool: undefined };
      return session(byEvent, dynamic, environment, state);
    },
  };
}

function session(byEvent: Map<RuleEvent, Handler[]>, dynamic: Dynamic, environment: RuleEnvironment, state: Connection): RuleSession {
  return {
    run(event, target, budget = DEFAULT_BUDGET) {
      const handlers = byEvent.get(event);
      if (!handlers) return state.pool === undefined ? CONTINUE_OUTCOME : { kind: 'continue', pool: state.pool };
      const interp = new Interp(event, target, environment, state, dynamic, budget);
      for (const handler of handlers) {
        if (state.disabled.has(`${handler.ruleIndex}:${event}`) || state.disabled.has(`${handler.ruleIndex}:all`)) continue;
        interp.rule = handler.rule;
        interp.ruleIndex = handler.ruleIndex;
        const failure = runHandler(interp, handler.body);
        if (failure === undefined) continue;
        environment.log(handler.rule, failure);
        return { kind: 'error', rule: handler.rule, message: failure };
      }
      if (interp.answered) return interp.answered;
      return state.pool === undefined ? CONTINUE_OUTCOME : { kind: 'continue', pool: state.pool };
    },
  };
}

/** Runs one `when` body: undefined when it ended well, else the line for the log. */
function runHandler(interp: Interp, body: Script): string | undefined {
  try {
    interp.script(body);
    return undefined;
  } catch (error) {
    if (error === RETURN) return undefined;
    if (error === BREAK || error === CONTINUE) return `error: invoked "${error === BREAK ? 'break' : 'continue'}" outside of a loop`;
    if (error instanceof TclError) {
      // Past the bound of what a connection's variables hold: they are dropped, so the connection starts over.
      if (error instanceof VariableBoundError) interp.variables.clear();
      const where = error.line === undefined ? '' : ` (line ${error.line})`;
      return `${error instanceof BudgetError ? 'aborted' : 'error'}: ${error.message}${where}`;
    }
    // A stack overflow from nesting the depth bound missed is the rule's failure, not the process's.
    if (error instanceof RangeError) return `error: ${error.message}`;
    throw error;
  }
}
