// Tcl's list commands: list, lindex, llength, lappend, split, join, concat.
import { arity } from './command-kit.ts';
import type { CommandSpec } from './model.ts';
import { TclError } from './signals.ts';
import { formatList, listValues, parseIndex } from './values.ts';

export const LIST_COMMANDS: CommandSpec[] = [
  {
    name: 'list',
    summary: 'A list of its arguments, quoted as Tcl quotes list elements.',
    forms: ['list ?value ...?'],
    run(run, args) {
      const result = formatList(args);
      run.charge(result.length);
      return result;
    },
  },
  {
    name: 'lindex',
    summary: 'The element at an index of a list (`end`, `end-1`...; further indexes go into nested lists).',
    forms: ['lindex list ?index ...?'],
    run(run, args) {
      if (args.length === 0) throw new TclError('wrong # args: should be "lindex list ?index ...?"');
      let value = args[0]!;
      for (const index of args.slice(1)) {
        run.step(1 + (value.length >> 10));
        const elements = listValues(value);
        value = elements[parseIndex(index, elements.length)] ?? '';
      }
      return value;
    },
  },
  {
    name: 'llength',
    summary: 'The number of elements of a list.',
    forms: ['llength list'],
    run(run, args) {
      arity(args, 1, 1, 'llength list');
      run.step(1 + (args[0]!.length >> 10));
      return String(listValues(args[0]!).length);
    },
  },
  {
    name: 'lappend',
    summary: 'Appends elements to the list in a variable.',
    forms: ['lappend varName ?value ...?'],
    run(run, args) {
      if (args.length === 0) throw new TclError('wrong # args: should be "lappend varName ?value ...?"');
      const current = run.variables.get(args[0]!) ?? '';
      const added = formatList(args.slice(1));
      const result = current === '' ? added : added === '' ? current : `${current} ${added}`;
      run.charge(added.length + 1);
      run.variables.set(args[0]!, result);
      return result;
    },
  },
  {
    name: 'split',
    summary: 'Splits a string into a list at any of the characters given (whitespace by default; "" splits into characters).',
    forms: ['split string ?splitChars?'],
    run(run, args) {
      arity(args, 1, 2, 'split string ?splitChars?');
      const [text, chars = ' \t\n\r'] = args as [string, string?];
      run.step(1 + ((text.length + chars.length) >> 10));
      let parts: string[];
      if (chars === '') parts = [...text];
      else {
        // A set: a long `chars` costs its length once, not once per character of the text.
        const set = new Set(chars);
        parts = [];
        let from = 0;
        for (let i = 0; i < text.length; i++) {
          if (set.has(text[i]!)) {
            parts.push(text.slice(from, i));
            from = i + 1;
          }
        }
        parts.push(text.slice(from));
      }
      const result = formatList(parts);
      run.charge(result.length);
      return result;
    },
  },
  {
    name: 'join',
    summary: 'Joins the elements of a list with a separator (a space by default).',
    forms: ['join list ?joinString?'],
    run(run, args) {
      arity(args, 1, 2, 'join list ?joinString?');
      run.step(1 + (args[0]!.length >> 10));
      const result = listValues(args[0]!).join(args[1] ?? ' ');
      run.charge(result.length);
      return result;
    },
  },
  {
    name: 'concat',
    summary: 'Joins its arguments with spaces, trimming each.',
    forms: ['concat ?arg ...?'],
    run(run, args) {
      run.step(args.reduce((sum, arg) => sum + arg.length, 0) >> 10);
      const result = args
        .map((arg) => arg.trim())
        .filter((arg) => arg !== '')
        .join(' ');
      run.charge(result.length);
      return result;
    },
  },
];
