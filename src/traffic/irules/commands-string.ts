// Tcl's `string` command: the subcommands rules use. Work proportional to a string's length is counted
// against the run's steps, and what a subcommand builds against its bytes.
import { arity, flag } from './command-kit.ts';
import type { CommandSpec, Run } from './model.ts';
import { chargeSearch, findFirst, findLast } from './search.ts';
import { TclError } from './signals.ts';
import { globMatch, listValues, parseIndex, parseIntArg } from './values.ts';

type Sub = { usage: string; min: number; max: number; run(run: Run, args: string[]): string };

const cost = (run: Run, ...texts: string[]) => run.step(texts.reduce((sum, text) => sum + (text.length >> 10), 0));
/** The text, its length counted against the run's steps. */
const counted = (run: Run, text: string): string => {
  cost(run, text);
  return text;
};

function options(args: string[], allowed: readonly string[]): [Set<string>, string[]] {
  const found = new Set<string>();
  let i = 0;
  while (i < args.length - 1 && allowed.includes(args[i]!)) found.add(args[i++]!);
  return [found, args.slice(i)];
}

const SPACE_CHARS = ' \t\n\r\v\f\0';
const SPACE_SET = new Set(SPACE_CHARS);

/** `string trim*`: the characters looked up in a set (a long `chars` costs its length once), the text counted. */
function trimSet(run: Run, text: string, chars: string | undefined, left: boolean, right: boolean): string {
  cost(run, text, chars ?? '');
  const set = chars === undefined ? SPACE_SET : new Set(chars);
  let start = 0;
  let end = text.length;
  if (left) while (start < end && set.has(text[start]!)) start++;
  if (right) while (end > start && set.has(text[end - 1]!)) end--;
  return text.slice(start, end);
}

function stringMap(run: Run, args: string[]): string {
  const [found, [mapping, text]] = options(args, ['-nocase']);
  if (mapping === undefined || text === undefined) throw new TclError('wrong # args: should be "string map ?-nocase? charMap string"');
  const pairs = listValues(mapping);
  if (pairs.length % 2 === 1) throw new TclError('char map list unbalanced');
  const nocase = found.has('-nocase');
  const subject = nocase ? text.toLowerCase() : text;
  const keys = pairs.filter((_, i) => i % 2 === 0).map((key) => (nocase ? key.toLowerCase() : key));
  run.step(1 + (mapping.length >> 10));
  // The work at each position: one look per key, and a key's length when its first character matches
  // there. It is counted as it goes (a step per 1024), so the clock is read while a long map runs.
  let work = 0;
  let out = '';
  let from = 0;
  for (let pos = 0; pos < text.length; ) {
    const at = subject.charCodeAt(pos);
    let k = -1;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      work++;
      if (key === '' || key.charCodeAt(0) !== at) continue;
      work += key.length;
      if (subject.startsWith(key, pos)) {
        k = i;
        break;
      }
    }
    if (work >= 1024) {
      run.step(work >> 10);
      work &= 1023;
    }
    if (k === -1) {
      pos++;
      continue;
    }
    const replacement = pairs[2 * k + 1]!;
    run.charge(replacement.length);
    out += text.slice(from, pos) + replacement;
    pos += keys[k]!.length;
    from = pos;
  }
  out += text.slice(from);
  run.charge(out.length);
  return out;
}

const SUBCOMMANDS: Record<string, Sub> = {
  length: { usage: 'string length string', min: 1, max: 1, run: (_, [text]) => String(text!.length) },
  tolower: { usage: 'string tolower string', min: 1, max: 1, run: (run, [text]) => counted(run, text!).toLowerCase() },
  toupper: { usage: 'string toupper string', min: 1, max: 1, run: (run, [text]) => counted(run, text!).toUpperCase() },
  match: {
    usage: 'string match ?-nocase? pattern string',
    min: 2,
    max: 3,
    run(run, args) {
      const [found, [pattern, text]] = options(args, ['-nocase']);
      if (pattern === undefined || text === undefined) throw new TclError(`wrong # args: should be "${this.usage}"`);
      run.step(1 + ((pattern.length * text.length) >> 12));
      return flag(globMatch(pattern, text, found.has('-nocase')));
    },
  },
  range: {
    usage: 'string range string first last',
    min: 3,
    max: 3,
    run(_, [text, first, last]) {
      const from = Math.max(0, parseIndex(first!, text!.length));
      const to = Math.min(text!.length - 1, parseIndex(last!, text!.length));
      return from > to ? '' : text!.slice(from, to + 1);
    },
  },
  index: {
    usage: 'string index string charIndex',
    min: 2,
    max: 2,
    run: (_, [text, index]) => text![parseIndex(index!, text!.length)] ?? '',
  },
  first: {
    usage: 'string first needleString haystackString ?startIndex?',
    min: 2,
    max: 3,
    run(run, [needle, haystack, start]) {
      chargeSearch(run, haystack!, needle!);
      if (needle === '') return '-1';
      return String(findFirst(haystack!, needle!, start === undefined ? 0 : Math.max(0, parseIndex(start, haystack!.length))));
    },
  },
  last: {
    usage: 'string last needleString haystackString ?lastIndex?',
    min: 2,
    max: 3,
    run(run, [needle, haystack, last]) {
      chargeSearch(run, haystack!, needle!);
      if (needle === '') return '-1';
      const end = last === undefined ? haystack!.length : parseIndex(last, haystack!.length);
      return end < 0 ? '-1' : String(findLast(haystack!, needle!, end));
    },
  },
  map: { usage: 'string map ?-nocase? charMap string', min: 2, max: 3, run: stringMap },
  equal: {
    usage: 'string equal ?-nocase? ?-length int? string1 string2',
    min: 2,
    max: 5,
    run(run, args) {
      let nocase = false;
      let length = -1;
      let i = 0;
      for (; i < args.length - 2; i++) {
        if (args[i] === '-nocase') nocase = true;
        else if (args[i] === '-length') length = parseIntArg(args[++i]!);
        else throw new TclError(`bad option "${args[i]}": must be -nocase or -length`);
      }
      let [a, b] = [args[i], args[i + 1]];
      if (a === undefined || b === undefined) throw new TclError(`wrong # args: should be "${this.usage}"`);
      cost(run, a, b);
      if (nocase) [a, b] = [a.toLowerCase(), b.toLowerCase()];
      if (length >= 0) [a, b] = [a.slice(0, length), b.slice(0, length)];
      return flag(a === b);
    },
  },
  compare: {
    usage: 'string compare ?-nocase? string1 string2',
    min: 2,
    max: 3,
    run(run, args) {
      const [found, [a, b]] = options(args, ['-nocase']);
      if (a === undefined || b === undefined) throw new TclError(`wrong # args: should be "${this.usage}"`);
      cost(run, a, b);
      const [x, y] = found.has('-nocase') ? [a.toLowerCase(), b.toLowerCase()] : [a, b];
      return x < y ? '-1' : x > y ? '1' : '0';
    },
  },
  trim: {
    usage: 'string trim string ?chars?',
    min: 1,
    max: 2,
    run: (run, [text, chars]) => trimSet(run, text!, chars, true, true),
  },
  trimleft: {
    usage: 'string trimleft string ?chars?',
    min: 1,
    max: 2,
    run: (run, [text, chars]) => trimSet(run, text!, chars, true, false),
  },
  trimright: {
    usage: 'string trimright string ?chars?',
    min: 1,
    max: 2,
    run: (run, [text, chars]) => trimSet(run, text!, chars, false, true),
  },
  repeat: {
    usage: 'string repeat string count',
    min: 2,
    max: 2,
    run(run, [text, count]) {
      const times = parseIntArg(count!);
      if (times <= 0) return '';
      // Counted before it is built: a huge count ends the run instead of exhausting memory.
      run.charge(text!.length * times);
      return text!.repeat(times);
    },
  },
  reverse: { usage: 'string reverse string', min: 1, max: 1, run: (run, [text]) => [...counted(run, text!)].reverse().join('') },
};

export const STRING_COMMAND: CommandSpec = {
  name: 'string',
  summary: `String operations: ${Object.keys(SUBCOMMANDS).join(', ')}.`,
  forms: Object.values(SUBCOMMANDS).map((sub) => sub.usage),
  shape: (args) =>
    args[0] === undefined
      ? args.length === 0
        ? 'wrong # args: should be "string subcommand ?arg ...?"'
        : 'the subcommand of "string" must be written out'
      : Object.hasOwn(SUBCOMMANDS, args[0])
        ? []
        : `unknown subcommand "string ${args[0]}" (supported: ${Object.keys(SUBCOMMANDS).join(', ')})`,
  run(run, args) {
    const sub = Object.hasOwn(SUBCOMMANDS, args[0] ?? '') ? SUBCOMMANDS[args[0]!]! : undefined;
    if (!sub) throw new TclError(`unknown or ambiguous subcommand "${args[0] ?? ''}"`);
    const rest = args.slice(1);
    arity(rest, sub.min, sub.max, sub.usage);
    return sub.run(run, rest);
  },
};
