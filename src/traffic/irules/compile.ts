// compileRules: a service's rules, checked and compiled once when they are attached. A rule is the
// checker's Tcl (tcl-check.ts, the same reading as the stored script object), then only `when EVENT
// ?priority N? ?timing on|off? {body}` blocks (and `priority N`) at its top level, then bodies whose
// every command is known (attach.ts). The first problem refuses the whole set, naming rule, line and command.
import { AttachError, attachScript } from './attach.ts';
import { type Handler, makeCompiledRules } from './compiled.ts';
import { type Command, Source } from './model.ts';
import { ParseError, parseScript } from './parse.ts';
import { checkScript } from './tcl-check.ts';
import { type CompiledRules, RULE_EVENTS, type RuleEvent, type RuleRefusal } from './types.ts';

/** The priority of a `when` that names none. */
export const DEFAULT_PRIORITY = 500;
const EVENTS = new Set<string>(RULE_EVENTS);

export type RuleText = { name: string; text: string };
export type CompileResult = { ok: true; rules: CompiledRules } | { ok: false; refusal: RuleRefusal };

class Refused extends Error {
  line: number;
  command: string | undefined;
  constructor(message: string, line: number, command?: string) {
    super(message);
    this.line = line;
    this.command = command;
  }
}

/**
 * Checks and compiles a service's rules, in the order they are attached.
 *
 * @example compileRules([{ name: 'r', text: 'when HTTP_REQUEST { pool web }' }]).ok // true
 */
export function compileRules(rules: readonly RuleText[]): CompileResult {
  const handlers: Handler[] = [];
  for (const [ruleIndex, rule] of rules.entries()) {
    try {
      handlers.push(...compileRule(rule, ruleIndex));
    } catch (error) {
      if (!(error instanceof Refused || error instanceof AttachError)) throw error;
      const where = `rule "${rule.name}", line ${error.line}`;
      const refusal: RuleRefusal = { rule: rule.name, line: error.line, message: `${where}: ${error.message}` };
      if (error.command !== undefined) refusal.command = error.command;
      return { ok: false, refusal };
    }
  }
  return { ok: true, rules: makeCompiledRules(handlers) };
}

function compileRule(rule: RuleText, ruleIndex: number): Handler[] {
  const check = checkScript(rule.text);
  if (!check.ok) throw new Refused(check.kind === 'incomplete' ? `incomplete command: ${check.detail}` : check.detail, check.line);
  const source = new Source(rule.text);
  let commands: Command[];
  try {
    commands = parseScript(source).commands;
  } catch (error) {
    if (error instanceof ParseError) throw new Refused(error.message, source.lineAt(error.at));
    throw error;
  }
  const priorities = commands.filter((command) => command.words[0]!.literal === 'priority');
  if (priorities.length > 1) throw new Refused('a rule may set its priority once', priorities[1]!.line, 'priority');
  const rulePriority = priorities.length === 1 ? priorityOf(priorities[0]!, 1) : DEFAULT_PRIORITY;
  const handlers: Handler[] = [];
  for (const command of commands) {
    const name = command.words[0]!.literal;
    if (name === 'priority') {
      if (command.words.length !== 2) throw new Refused('wrong # args: should be "priority N"', command.line, 'priority');
      continue;
    }
    if (name !== 'when') {
      const what = name === undefined ? 'a computed command' : `"${name}"`;
      throw new Refused(`only "when" blocks (and "priority") may stand at the top level of a rule, not ${what}`, command.line, name);
    }
    handlers.push(whenBlock(rule.name, ruleIndex, handlers.length, command, rulePriority));
  }
  return handlers;
}

function whenBlock(rule: string, ruleIndex: number, order: number, command: Command, rulePriority: number): Handler {
  const words = command.words;
  const usage = 'should be "when EVENT ?priority N? ?timing on|off? {body}"';
  const event = words[1]?.literal;
  if (event === undefined || words.length < 3) throw new Refused(`wrong # args: ${usage}`, command.line, 'when');
  if (!EVENTS.has(event)) throw new Refused(`unknown event "${event}" (supported: ${RULE_EVENTS.join(', ')})`, words[1]!.line, 'when');
  let priority = rulePriority;
  for (let i = 2; i < words.length - 1; i += 2) {
    const option = words[i]!.literal;
    const value = words[i + 1]?.literal;
    if (option === 'priority' && i + 1 < words.length - 1) priority = priorityOf(command, i + 1);
    else if (option === 'timing' && (value === 'on' || value === 'off') && i + 1 < words.length - 1) continue;
    else throw new Refused(`wrong # args: ${usage}`, words[i]!.line, 'when');
  }
  const body = words.at(-1)!;
  if (!body.braced) throw new Refused('the body of "when" must be in braces', body.line, 'when');
  const script = parseBody(body.source, body.start + 1, body.end - 1);
  attachScript(script);
  return { rule, ruleIndex, order, event: event as RuleEvent, priority, body: script };
}

function parseBody(source: Source, start: number, end: number) {
  try {
    return parseScript(source, start, end);
  } catch (error) {
    if (error instanceof ParseError) throw new Refused(error.message, source.lineAt(error.at));
    throw error;
  }
}

function priorityOf(command: Command, index: number): number {
  const text = command.words[index]?.literal;
  const value = text !== undefined && /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= 0 && value <= 1000))
    throw new Refused(`priority must be a whole number from 0 to 1000, not "${(text ?? '').slice(0, 20)}"`, command.line, 'priority');
  return value;
}
