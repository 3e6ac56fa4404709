// Tcl's control and variable commands: if, switch, foreach, while, for, return, break, continue, expr,
// set, unset, incr, append, info exists.
import { arity, flag } from './command-kit.ts';
import { truthy, valueString } from './expr-eval.ts';
import type { SwitchArm } from './model.ts';
import type { BodyRole, CommandSpec, Run } from './model.ts';
import { BREAK, CONTINUE, RETURN, TclError } from './signals.ts';
import { globMatch, listValues, parseIntArg } from './values.ts';

/** The roles of `if`'s words: condition, optional `then`, body, then `elseif`/`else` clauses. */
function ifShape(args: ReadonlyArray<string | undefined>): BodyRole[] | string {
  const roles: BodyRole[] = [];
  let i = 0;
  for (;;) {
    if (i >= args.length) return 'wrong # args: no expression after "if" or "elseif"';
    roles.push({ index: i++, kind: 'expr' });
    if (args[i] === 'then') i++;
    if (i >= args.length) return 'wrong # args: no script after a condition';
    roles.push({ index: i++, kind: 'script' });
    if (i >= args.length) return roles;
    const keyword = args[i];
    if (keyword === undefined) return 'the keywords of "if" (elseif, else) must be written out';
    if (keyword === 'elseif') {
      i++;
      continue;
    }
    if (keyword === 'else') i++;
    if (i >= args.length) return 'wrong # args: no script after "else"';
    roles.push({ index: i++, kind: 'script' });
    return i === args.length ? roles : `extra words after the else body of "if"`;
  }
}

function runIf(run: Run, args: string[], command: Parameters<CommandSpec['run']>[2]): string {
  let i = 0;
  for (;;) {
    const condition = truthy(run.expr(command, i, args[i]!));
    i++;
    if (args[i] === 'then') i++;
    if (condition) return run.script(run.body(command, i, args[i]!));
    i++;
    if (i >= args.length) return '';
    if (args[i] === 'elseif') {
      i++;
      continue;
    }
    if (args[i] === 'else') i++;
    return run.script(run.body(command, i, args[i]!));
  }
}

type SwitchForm = { mode: 'exact' | 'glob'; nocase: boolean; subject: number; rest: number } | string;

/** `switch`'s options, read from the words written out: a computed word is never an option. */
function switchForm(args: ReadonlyArray<string | undefined>): SwitchForm {
  let mode: 'exact' | 'glob' = 'exact';
  let nocase = false;
  let i = 0;
  for (; i < args.length; i++) {
    const option = args[i];
    if (option === undefined || !option.startsWith('-')) break;
    if (option === '--') {
      i++;
      break;
    }
    if (option === '-exact' || option === '-glob') mode = option === '-glob' ? 'glob' : 'exact';
    else if (option === '-nocase') nocase = true;
    else return `switch option "${option}" is not supported (supported: -exact, -glob, -nocase, --)`;
  }
  const rest = args.length - i - 1;
  if (rest < 1 || (rest > 1 && rest % 2 === 1))
    return 'wrong # args: should be "switch ?options? string {pattern body ?pattern body ...?}"';
  return { mode, nocase, subject: i, rest };
}

function switchShape(args: ReadonlyArray<string | undefined>): BodyRole[] | string {
  const form = switchForm(args);
  if (typeof form === 'string') return form;
  if (form.rest === 1) return [{ index: form.subject + 1, kind: 'arms' }];
  const roles: BodyRole[] = [];
  for (let i = form.subject + 2; i < args.length; i += 2) if (args[i] !== '-') roles.push({ index: i, kind: 'script' });
  if (args.at(-1) === '-') return 'no body specified for the last switch pattern';
  return roles;
}

function runSwitch(run: Run, args: string[], command: Parameters<CommandSpec['run']>[2]): string {
  // The options are read from the words written out, so once per command, not per run.
  command.cache ??= switchForm(command.words.slice(1).map((word) => word.literal));
  const form = command.cache as SwitchForm;
  if (typeof form === 'string') throw new TclError(form);
  run.step(args[form.subject]!.length >> 10);
  const subject = form.nocase ? args[form.subject]!.toLowerCase() : args[form.subject]!;
  const matches = (pattern: string, last: boolean): boolean => {
    // A glob's work is at most the product of the lengths; an exact comparison reads at most the pattern.
    run.step(1 + (form.mode === 'glob' ? (pattern.length * subject.length) >> 12 : pattern.length >> 10));
    if (last && pattern === 'default') return true;
    const p = form.nocase ? pattern.toLowerCase() : pattern;
    return form.mode === 'glob' ? globMatch(p, subject) : p === subject;
  };
  if (form.rest === 1) {
    const arms: SwitchArm[] = run.arms(command, form.subject + 1, args[form.subject + 1]!);
    for (let i = 0; i < arms.length; i++) {
      if (!matches(arms[i]!.pattern, i === arms.length - 1)) continue;
      let j = i;
      while (arms[j]!.body === undefined) j++;
      return run.script(arms[j]!.body!);
    }
    return '';
  }
  for (let i = form.subject + 1; i < args.length; i += 2) {
    if (!matches(args[i]!, i === args.length - 2)) continue;
    let j = i + 1;
    while (args[j] === '-') j += 2;
    return run.script(run.body(command, j, args[j]!));
  }
  return '';
}

/** Runs a loop body; false when `break` ended the loop. */
function loopTurn(run: Run, run_: () => void): boolean {
  run.step();
  try {
    run_();
  } catch (signal) {
    if (signal === BREAK) return false;
    if (signal !== CONTINUE) throw signal;
  }
  return true;
}

function checkName(name: string): string {
  if (name.endsWith(')') && name.includes('(')) throw new TclError('array variables are not supported');
  return name;
}

const arrayShape = (args: ReadonlyArray<string | undefined>): BodyRole[] | string =>
  args[0]?.endsWith(')') && args[0].includes('(') ? 'array variables are not supported' : [];

export const CONTROL_COMMANDS: CommandSpec[] = [
  {
    name: 'if',
    summary: 'Runs the body of the first condition (an expression) that is true.',
    forms: ['if {cond} ?then? {body} ?elseif {cond} {body}...? ?else {body}?'],
    shape: ifShape,
    run: runIf,
  },
  {
    name: 'switch',
    summary: 'Runs the body of the first pattern the string matches (`default` last matches anything; `-` falls through).',
    forms: ['switch ?-exact|-glob? ?-nocase? ?--? string {pattern body ...}', 'switch ?options? string pattern body ?pattern body ...?'],
    shape: switchShape,
    run: runSwitch,
  },
  {
    name: 'foreach',
    summary: 'Runs the body once per element of the list (several variable names take that many elements a turn).',
    forms: ['foreach varName list {body}', 'foreach {var1 var2} list {body}'],
    shape: (args) => (args.length === 3 ? [{ index: 2, kind: 'script' }] : 'wrong # args: should be "foreach varList list body"'),
    run(run, args, command) {
      run.step((args[0]!.length + args[1]!.length) >> 10);
      const names = listValues(args[0]!).map(checkName);
      if (names.length === 0) throw new TclError('foreach varlist is empty');
      const values = listValues(args[1]!);
      const body = run.body(command, 2, args[2]!);
      for (let i = 0; i < values.length; i += names.length) {
        for (const [k, name] of names.entries()) run.variables.set(name, values[i + k] ?? '');
        if (!loopTurn(run, () => run.script(body))) break;
      }
      return '';
    },
  },
  {
    name: 'while',
    summary: 'Runs the body while the condition is true (each turn counts against the budget).',
    forms: ['while {cond} {body}'],
    shape: (args) =>
      args.length === 2
        ? [
            { index: 0, kind: 'expr' },
            { index: 1, kind: 'script' },
          ]
        : 'wrong # args: should be "while test command"',
    run(run, args, command) {
      const body = run.body(command, 1, args[1]!);
      while (truthy(run.expr(command, 0, args[0]!))) if (!loopTurn(run, () => run.script(body))) break;
      return '';
    },
  },
  {
    name: 'for',
    summary: 'Tcl `for`: a start script, a condition, a next script and a body.',
    forms: ['for {start} {cond} {next} {body}'],
    shape: (args) =>
      args.length === 4
        ? [
            { index: 0, kind: 'script' },
            { index: 1, kind: 'expr' },
            { index: 2, kind: 'script' },
            { index: 3, kind: 'script' },
          ]
        : 'wrong # args: should be "for start test next command"',
    run(run, args, command) {
      run.script(run.body(command, 0, args[0]!));
      const next = run.body(command, 2, args[2]!);
      const body = run.body(command, 3, args[3]!);
      while (truthy(run.expr(command, 1, args[1]!))) {
        if (!loopTurn(run, () => run.script(body))) break;
        run.script(next);
      }
      return '';
    },
  },
  {
    name: 'return',
    summary: 'Ends the current `when` body (the rule’s other events and the other rules still run).',
    forms: ['return ?value?'],
    shape: (args) => (args.length <= 1 ? [] : 'return options (-code, -level) are not supported'),
    run() {
      throw RETURN;
    },
  },
  {
    name: 'break',
    summary: 'Ends the innermost loop.',
    forms: ['break'],
    run() {
      throw BREAK;
    },
  },
  {
    name: 'continue',
    summary: 'Goes on to the next turn of the innermost loop.',
    forms: ['continue'],
    run() {
      throw CONTINUE;
    },
  },
  {
    name: 'expr',
    summary: 'Evaluates an expression: integers (64-bit), doubles, strings, Tcl and rule-language operators.',
    forms: ['expr {expression}', 'expr arg ?arg ...?'],
    shape: (args) => (args.length === 1 ? [{ index: 0, kind: 'expr' }] : []),
    run(run, args, command) {
      if (args.length === 0) throw new TclError('wrong # args: should be "expr arg ?arg ...?"');
      return valueString(args.length === 1 ? run.expr(command, 0, args[0]!) : run.expr(command, undefined, args.join(' ')));
    },
  },
  {
    name: 'set',
    summary: 'Reads a variable, or sets it; variables last as long as the client connection.',
    forms: ['set varName', 'set varName value'],
    shape: arrayShape,
    run(run, args) {
      arity(args, 1, 2, 'set varName ?newValue?');
      const name = checkName(args[0]!);
      if (args.length === 1) {
        const value = run.variables.get(name);
        if (value === undefined) throw new TclError(`can't read "${name}": no such variable`);
        return value;
      }
      run.variables.set(name, args[1]!);
      return args[1]!;
    },
  },
  {
    name: 'unset',
    summary: 'Removes variables.',
    forms: ['unset ?-nocomplain? ?--? varName ...'],
    run(run, args) {
      let i = 0;
      let complain = true;
      if (args[i] === '-nocomplain') {
        complain = false;
        i++;
      }
      if (args[i] === '--') i++;
      for (; i < args.length; i++) {
        if (!run.variables.delete(args[i]!) && complain) throw new TclError(`can't unset "${args[i]}": no such variable`);
      }
      return '';
    },
  },
  {
    name: 'incr',
    summary: 'Adds to an integer variable (1 by default; an unset variable counts from 0).',
    forms: ['incr varName ?increment?'],
    shape: arrayShape,
    run(run, args) {
      arity(args, 1, 2, 'incr varName ?increment?');
      const name = checkName(args[0]!);
      const current = run.variables.get(name);
      const value = BigInt(current === undefined ? 0 : parseIntArg(current)) + BigInt(args.length === 2 ? parseIntArg(args[1]!) : 1);
      const result = BigInt.asIntN(64, value).toString();
      run.variables.set(name, result);
      return result;
    },
  },
  {
    name: 'append',
    summary: 'Appends values to a variable.',
    forms: ['append varName ?value ...?'],
    shape: arrayShape,
    run(run, args) {
      if (args.length === 0) throw new TclError('wrong # args: should be "append varName ?value ...?"');
      const name = checkName(args[0]!);
      const added = args.slice(1).join('');
      run.charge(added.length);
      const result = (run.variables.get(name) ?? '') + added;
      run.variables.set(name, result);
      return result;
    },
  },
  {
    name: 'info',
    summary: 'Only `info exists`: 1 when the variable is set.',
    forms: ['info exists varName'],
    shape: (args) => (args[0] === 'exists' && args.length === 2 ? [] : 'only "info exists varName" is supported'),
    run(run, args) {
      arity(args, 2, 2, 'info exists varName');
      return flag(run.variables.has(args[1]!));
    },
  },
];
