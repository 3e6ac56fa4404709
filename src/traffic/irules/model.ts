// The compiled form of a rule: scripts of commands of words, read once when the rule is attached. Bodies
// (`if`, `switch`, `foreach`...) and expressions are compiled when the rule is attached and kept on their
// word, so a request never parses text again.
import type { RuleConnection, RuleEnvironment, RuleEvent, RuleRequest, RuleResponse, RunOutcome } from './types.ts';

/** A text being read, with its line numbers (1-based, in the rule's text). */
export class Source {
  readonly text: string;
  private readonly base: number;
  private newlines: number[] | undefined;
  constructor(text: string, base = 1) {
    this.text = text;
    this.base = base;
  }

  /** The line of position `pos`. */
  lineAt(pos: number): number {
    if (this.newlines === undefined) {
      this.newlines = [];
      for (let i = this.text.indexOf('\n'); i !== -1; i = this.text.indexOf('\n', i + 1)) this.newlines.push(i);
    }
    let low = 0;
    let high = this.newlines.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.newlines[mid]! < pos) low = mid + 1;
      else high = mid;
    }
    return this.base + low;
  }
}

/** `$name` in a word. */
export type VarPart = { name: string };
/** A piece of a word: literal text, a variable, or a command substitution. */
export type Part = string | VarPart | Script;

/** One arm of a `switch`: its pattern and its body (undefined for `-`, which falls through to the next). */
export type SwitchArm = { pattern: string; body: Script | undefined };

export type Word = {
  /** The word's value when it has no substitution (braced, or plain text). */
  literal: string | undefined;
  /** The pieces to join when it has. */
  parts: readonly Part[];
  /** Where the word's text is in `source` (braces and quotes included). */
  start: number;
  end: number;
  braced: boolean;
  line: number;
  source: Source;
  /** Compiled once, when the rule is attached: the word as a script, an expression, or `switch` arms. */
  script?: Script;
  expr?: Expr;
  arms?: SwitchArm[];
};

export type Command = {
  line: number;
  words: Word[];
  /** Set when the rule is attached: what the command name means. */
  spec?: CommandSpec;
  /** What the command worked out once from its written-out words (`switch` options). */
  cache?: unknown;
};

export type Script = { commands: Command[] };

export const isScript = (part: Part): part is Script => typeof part !== 'string' && 'commands' in part;

/** A value of an expression: a 64-bit integer, a double, or a string. */
export type Value = bigint | number | string;

/** An expression, compiled. */
export type Expr =
  | { k: 'const'; v: Value }
  | { k: 'word'; parts: readonly Part[] }
  | { k: 'var'; name: string }
  | { k: 'cmd'; script: Script }
  | { k: 'un'; op: string; a: Expr }
  | { k: 'bin'; op: string; a: Expr; b: Expr; regex?: RegExp }
  | { k: 'tern'; c: Expr; a: Expr; b: Expr }
  | { k: 'fn'; name: string; args: Expr[] };

/** An argument that is itself code: a script (`if` bodies), an expression (`if` conditions), or `switch` arms. */
export type BodyRole = { index: number; kind: 'script' | 'expr' | 'arms' };

export type CommandSpec = {
  name: string;
  /** One sentence for the docs. */
  summary: string;
  /** Its forms, as the docs list them. */
  forms: readonly string[];
  /**
   * From the arguments as written (undefined where computed at run time): which are bodies, or why this
   * form is refused when the rule is attached (an unknown subcommand, a form the interpreter does not do).
   */
  shape?(args: ReadonlyArray<string | undefined>): BodyRole[] | string;
  run(run: Run, args: string[], command: Command): string;
};

/** What a command sees of the run it is part of. */
export interface Run {
  readonly event: RuleEvent;
  /** The name of the rule whose code runs. */
  readonly rule: string;
  readonly ruleIndex: number;
  readonly connection: RuleConnection;
  readonly request: RuleRequest | undefined;
  readonly response: RuleResponse | undefined;
  readonly environment: RuleEnvironment;
  readonly variables: Map<string, string>;
  /** Runs a script; its result is its last command's. */
  script(script: Script): string;
  /** Argument `index` of `command` (0 is the first after the name) as a script, compiled once. */
  body(command: Command, index: number, value: string): Script;
  /** Argument `index` of `command` as an expression, evaluated (undefined: an expression built at run time). */
  expr(command: Command, index: number | undefined, value: string): Value;
  /** Argument `index` of `command` as the arms of a `switch`. */
  arms(command: Command, index: number, value: string): SwitchArm[];
  /** Counts `count` steps of the budget (a command, an expression node, a loop turn). */
  step(count?: number): void;
  /** Counts `bytes` more built by the run; past the bound the run ends. */
  charge(bytes: number): void;
  /** HTTP::respond, HTTP::redirect, reject, drop: the first answer of an event wins. */
  answer(outcome: Exclude<RunOutcome, { kind: 'continue' } | { kind: 'error' }>): void;
  pickPool(pool: string): void;
  /** `event disable`: this rule's `event` (or all its events) run no more on this connection. */
  disable(event: RuleEvent | 'all'): void;
  /** `event <EVENT> enable`: undoes `disable` for this rule. */
  enable(event: RuleEvent | 'all'): void;
  log(line: string): void;
}
