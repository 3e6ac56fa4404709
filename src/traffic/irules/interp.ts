// One event's run of a service's rules: substitutes words, calls commands, evaluates expressions, and
// counts every step against the budget (steps, the clock every CLOCK_EVERY steps, bytes built, depth).
import type { Dynamic } from './dynamic.ts';
import { type ExprHost, evaluate } from './expr-eval.ts';
import type { Expr, Value } from './expr-parse.ts';
import type { Command, Part, Script, SwitchArm } from './model.ts';
import { BudgetError, TclError } from './signals.ts';
import type { RuleBudget, RuleConnection, RuleEnvironment, RuleEvent, RuleRequest, RuleResponse, RunOutcome } from './types.ts';
import type { Variables } from './variables.ts';

/** The budget of a run when the data plane gives none. */
export const DEFAULT_BUDGET: RuleBudget = { maxSteps: 10_000, maxMs: 50 };
/** The most characters a run may build (words, `append`, `string repeat`...): 1 MiB. */
export const MAX_RUN_BYTES = 1 << 20;
/** How deep scripts may nest at run time (bodies in bodies, substitutions in substitutions). */
export const MAX_RUN_DEPTH = 200;
const CLOCK_EVERY = 64;

/** What lasts as long as the connection: variables, disabled events, the pool picked. */
export type Connection = {
  /** Bounded when a value is stored (variables.ts). */
  variables: Variables;
  disabled: Set<string>;
  pool: string | undefined;
};

export class Interp implements ExprHost {
  readonly event: RuleEvent;
  rule = '';
  ruleIndex = 0;
  readonly connection: RuleConnection;
  readonly request: RuleRequest | undefined;
  readonly response: RuleResponse | undefined;
  readonly environment: RuleEnvironment;
  readonly variables: Variables;
  answered: Exclude<RunOutcome, { kind: 'continue' } | { kind: 'error' }> | undefined;
  private readonly state: Connection;
  private readonly dynamic: Dynamic;
  private readonly maxSteps: number;
  private readonly deadline: number;
  private readonly maxMs: number;
  private steps = 0;
  private nextClock = CLOCK_EVERY;
  private built = 0;
  private depth = 0;

  constructor(
    event: RuleEvent,
    target: { connection: RuleConnection; request?: RuleRequest; response?: RuleResponse },
    environment: RuleEnvironment,
    state: Connection,
    dynamic: Dynamic,
    budget: RuleBudget,
  ) {
    this.event = event;
    this.connection = target.connection;
    this.request = target.request;
    this.response = target.response;
    this.environment = environment;
    this.state = state;
    this.variables = state.variables;
    this.dynamic = dynamic;
    this.maxSteps = budget.maxSteps;
    this.maxMs = budget.maxMs;
    this.deadline = environment.nowMs() + budget.maxMs;
  }

  script(script: Script): string {
    if (++this.depth > MAX_RUN_DEPTH) {
      this.depth--;
      throw new BudgetError(`scripts nested more than ${MAX_RUN_DEPTH} deep`);
    }
    try {
      let result = '';
      const commands = script.commands;
      for (let i = 0; i < commands.length; i++) result = this.command(commands[i]!);
      return result;
    } finally {
      this.depth--;
    }
  }

  private command(command: Command): string {
    this.step();
    const words = command.words;
    const args = new Array<string>(words.length - 1);
    try {
      for (let i = 1; i < words.length; i++) {
        const word = words[i]!;
        args[i - 1] = word.literal ?? this.substitute(word.parts);
      }
      const name = words[0]!;
      const spec = command.spec ?? this.dynamic.resolve(command, name.literal ?? this.substitute(name.parts));
      return spec.run(this, args, command);
    } catch (error) {
      if (error instanceof TclError && error.line === undefined) error.line = command.line;
      throw error;
    }
  }

  substitute(parts: readonly Part[]): string {
    if (parts.length === 1) return this.part(parts[0]!);
    let out = '';
    for (let i = 0; i < parts.length; i++) out += this.part(parts[i]!);
    this.charge(out.length);
    return out;
  }

  private part(part: Part): string {
    if (typeof part === 'string') return part;
    if ('name' in part) return this.variable(part.name);
    return this.script(part);
  }

  variable(name: string): string {
    const value = this.variables.get(name);
    if (value === undefined) throw new TclError(`can't read "${name}": no such variable`);
    return value;
  }

  body(command: Command, index: number, value: string): Script {
    const script = command.words[index + 1]?.script;
    if (script) return script;
    this.step(1 + (value.length >> 8));
    return this.dynamic.script(value, command.line);
  }

  arms(command: Command, index: number, value: string): SwitchArm[] {
    const arms = command.words[index + 1]?.arms;
    if (arms) return arms;
    this.step(1 + (value.length >> 8));
    return this.dynamic.switchArms(value, command.line);
  }

  expr(command: Command, index: number | undefined, value: string): Value {
    let expr: Expr | undefined = index === undefined ? undefined : command.words[index + 1]?.expr;
    if (!expr) {
      this.step(1 + (value.length >> 8));
      expr = this.dynamic.expr(value, command.line);
    }
    if (++this.depth > MAX_RUN_DEPTH) {
      this.depth--;
      throw new BudgetError(`expressions nested more than ${MAX_RUN_DEPTH} deep`);
    }
    try {
      return evaluate(this, expr);
    } finally {
      this.depth--;
    }
  }

  step(count = 1): void {
    this.steps += count;
    if (this.steps > this.maxSteps) throw new BudgetError(`the rule ran past its budget of ${this.maxSteps} steps`);
    if (this.steps >= this.nextClock) {
      this.nextClock = this.steps + CLOCK_EVERY;
      if (this.environment.nowMs() > this.deadline) throw new BudgetError(`the rule ran past its budget of ${this.maxMs} ms`);
    }
  }

  charge(bytes: number): void {
    this.built += bytes;
    if (this.built > MAX_RUN_BYTES) throw new BudgetError(`the rule built more than ${MAX_RUN_BYTES} bytes`);
  }

  answer(outcome: Exclude<RunOutcome, { kind: 'continue' } | { kind: 'error' }>): void {
    if (this.answered) {
      const first = this.answered.kind === 'respond' ? `a ${this.answered.status} answer` : `"${this.answered.kind}"`;
      this.log(
        `error: ${outcome.kind === 'respond' ? 'a second answer' : `"${outcome.kind}"`} ignored: this ${this.event} already chose ${first}`,
      );
      return;
    }
    this.answered = outcome;
  }

  pickPool(pool: string): void {
    this.state.pool = pool;
  }

  disable(event: RuleEvent | 'all'): void {
    this.state.disabled.add(`${this.ruleIndex}:${event}`);
  }

  enable(event: RuleEvent | 'all'): void {
    this.state.disabled.delete(`${this.ruleIndex}:${event}`);
  }

  log(line: string): void {
    this.environment.log(this.rule, line);
  }
}
