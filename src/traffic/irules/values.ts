// Tcl's values are strings; these read and write the shapes commands give them: lists (Tcl_SplitList and
// Tcl_Merge), glob patterns (`string match`), numbers and booleans as `expr` reads them.
import { TclError } from './signals.ts';

const LIST_SPACE = ' \t\n\v\f\r';

/** One element of a list, with where its text starts in the list string and whether it was braced. */
export type ListElement = { value: string; start: number; braced: boolean };

/**
 * Splits a Tcl list (TclFindElement): braced elements are verbatim, quoted and bare ones get backslash
 * substitution.
 *
 * @example splitList('a {b c} "d e"').map((e) => e.value) // ['a', 'b c', 'd e']
 */
export function splitList(list: string): ListElement[] {
  const elements: ListElement[] = [];
  let pos = 0;
  const end = list.length;
  for (;;) {
    while (pos < end && LIST_SPACE.includes(list[pos]!)) pos++;
    if (pos >= end) return elements;
    const c = list[pos];
    if (c === '{') {
      let level = 0;
      let close = -1;
      for (let i = pos; i < end; i++) {
        const d = list[i];
        if (d === '\\') i++;
        else if (d === '{') level++;
        else if (d === '}' && --level === 0) {
          close = i;
          break;
        }
      }
      if (close === -1) throw new TclError('unmatched open brace in list');
      if (close + 1 < end && !LIST_SPACE.includes(list[close + 1]!)) {
        throw new TclError(`list element in braces followed by "${list[close + 1]}" instead of space`);
      }
      elements.push({ value: list.slice(pos + 1, close), start: pos + 1, braced: true });
      pos = close + 1;
    } else if (c === '"') {
      let i = pos + 1;
      while (i < end && list[i] !== '"') i += list[i] === '\\' ? 2 : 1;
      if (i >= end) throw new TclError('unmatched open quote in list');
      if (i + 1 < end && !LIST_SPACE.includes(list[i + 1]!)) {
        throw new TclError(`list element in quotes followed by "${list[i + 1]}" instead of space`);
      }
      elements.push({ value: backslashes(list.slice(pos + 1, i)), start: pos + 1, braced: false });
      pos = i + 1;
    } else {
      let i = pos;
      while (i < end && !LIST_SPACE.includes(list[i]!)) i += list[i] === '\\' ? 2 : 1;
      i = Math.min(i, end);
      elements.push({ value: backslashes(list.slice(pos, i)), start: pos, braced: false });
      pos = i;
    }
  }
}

/** The values of a list's elements. */
export const listValues = (list: string): string[] => splitList(list).map((element) => element.value);

const SIMPLE = /^[^\s{}[\]$"\\;]+$/;

/**
 * One element as Tcl_Merge writes it: bare when it can be, braced when its braces balance, else with backslashes.
 *
 * @example formatElement('a b') // '{a b}'
 */
export function formatElement(value: string, first = false): string {
  if (value === '') return '{}';
  if (SIMPLE.test(value) && !(first && value[0] === '#')) return value;
  if (bracesBalance(value) && !value.endsWith('\\')) return `{${value}}`;
  let out = '';
  for (const c of value) {
    if ('{}[]$"\\; '.includes(c)) out += `\\${c}`;
    else if (c === '\n') out += '\\n';
    else if (c === '\t') out += '\\t';
    else if (c === '\r') out += '\\r';
    else if (c === '\v') out += '\\v';
    else if (c === '\f') out += '\\f';
    else out += c;
  }
  return first && out[0] === '#' ? `\\${out}` : out;
}

function bracesBalance(value: string): boolean {
  let level = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\') i++;
    else if (c === '{') level++;
    else if (c === '}' && --level < 0) return false;
  }
  return level === 0;
}

/** A list of the values, as `list` builds it. */
export const formatList = (values: readonly string[]): string => values.map((value, i) => formatElement(value, i === 0)).join(' ');

const SIMPLE_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/**
 * Tcl's backslash substitution at `text[pos]` (a backslash): the characters it stands for and where it ends.
 * A backslash-newline with the blanks after it is one space.
 */
export function backslashAt(text: string, pos: number, end = text.length): [value: string, next: number] {
  const c = text[pos + 1];
  if (pos + 1 >= end || c === undefined) return ['\\', pos + 1];
  if (c === '\n') {
    let next = pos + 2;
    while (next < end && (text[next] === ' ' || text[next] === '\t')) next++;
    return [' ', next];
  }
  const simple = SIMPLE_ESCAPES[c];
  if (simple !== undefined) return [simple, pos + 2];
  if (c >= '0' && c <= '7') {
    let next = pos + 1;
    while (next < end && next < pos + 4 && text[next]! >= '0' && text[next]! <= '7') next++;
    return [String.fromCharCode(Number.parseInt(text.slice(pos + 1, next), 8) & 0xff), next];
  }
  const hexDigits = c === 'x' ? 2 : c === 'u' ? 4 : c === 'U' ? 8 : 0;
  if (hexDigits > 0) {
    let next = pos + 2;
    while (next < end && next < pos + 2 + hexDigits && /[0-9a-fA-F]/.test(text[next]!)) next++;
    if (next === pos + 2) return [c, pos + 2];
    const code = Number.parseInt(text.slice(pos + 2, next), 16);
    return [code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd', next];
  }
  return [c, pos + 2];
}

/** Every backslash sequence of a text replaced by what it stands for. */
export function backslashes(text: string): string {
  if (!text.includes('\\')) return text;
  let out = '';
  for (let pos = 0; pos < text.length; ) {
    if (text[pos] === '\\') {
      const [value, next] = backslashAt(text, pos);
      out += value;
      pos = next;
    } else out += text[pos++];
  }
  return out;
}

/**
 * Tcl's `string match`: `*`, `?`, `[chars]` with ranges, `\x` for x. Iterative with one backtrack point, so
 * the work is at most the product of the two lengths.
 *
 * @example globMatch('/static/*', '/static/a.css') // true
 */
export function globMatch(pattern: string, text: string, nocase = false): boolean {
  if (nocase) {
    pattern = pattern.toLowerCase();
    text = text.toLowerCase();
  }
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    const c = pattern[p];
    if (c === '*') {
      while (pattern[p] === '*') p++;
      if (p === pattern.length) return true;
      starP = p;
      starT = t;
      continue;
    }
    const step = p < pattern.length ? matchOne(pattern, p, text[t]!) : -1;
    if (step !== -1) {
      p = step;
      t++;
    } else if (starP !== -1) {
      p = starP;
      t = ++starT;
    } else return false;
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** Where the pattern goes on when its element at `p` matches `ch`, or -1. */
function matchOne(pattern: string, p: number, ch: string): number {
  const c = pattern[p];
  if (c === '?') return p + 1;
  if (c === '\\') return pattern[p + 1] === ch || (p + 1 >= pattern.length && ch === '\\') ? p + 2 : -1;
  if (c !== '[') return c === ch ? p + 1 : -1;
  let i = p + 1;
  let matched = false;
  while (i < pattern.length && pattern[i] !== ']') {
    let low = pattern[i]!;
    if (low === '\\') low = pattern[++i] ?? '\\';
    let high = low;
    if (pattern[i + 1] === '-' && i + 2 < pattern.length && pattern[i + 2] !== ']') {
      high = pattern[i + 2] === '\\' ? (pattern[i + 3] ?? '\\') : pattern[i + 2]!;
      i += pattern[i + 2] === '\\' ? 3 : 2;
    }
    if (low > high) [low, high] = [high, low];
    if (ch >= low && ch <= high) matched = true;
    i++;
  }
  return matched ? i + 1 : -1;
}

const INTEGER = /^\s*([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\s*$/;
const DOUBLE = /^\s*[+-]?((\d+\.\d*|\.\d+)([eE][+-]?\d+)?|\d+[eE][+-]?\d+)\s*$/;
const MIN_WIDE = -(2n ** 63n);
const MAX_UNSIGNED_WIDE = 2n ** 64n - 1n;

/**
 * A string as `expr` reads an operand: a wide (64-bit) integer as a bigint, a double as a number, or
 * undefined when it is no number (a leading 0 means octal, as in Tcl 8.4, whose dialect rules speak).
 */
export function parseNumber(text: string): bigint | number | undefined {
  if (text.length === 0 || text.length > 400) return undefined;
  const first = text.charCodeAt(0);
  // Most operands are plain words: skip the regular expressions for them.
  if (!(first <= 0x39 || first === 0x2e || first === 0x49 || first === 0x69)) return undefined;
  const integer = INTEGER.exec(text);
  if (integer) {
    const digits = integer[2]!;
    const body = digits.length > 1 && digits[0] === '0' && /[0-7]/.test(digits[1]!) ? `0o${digits.slice(1)}` : digits;
    let value = BigInt(body);
    if (value > MAX_UNSIGNED_WIDE) throw new TclError(`integer value too large to represent: "${clip(text)}"`);
    value = BigInt.asIntN(64, value);
    return integer[1] === '-' ? BigInt.asIntN(64, -value) : value;
  }
  if (DOUBLE.test(text)) return Number(text.trim());
  const word = text.trim().toLowerCase();
  if (word === 'inf' || word === '+inf') return Number.POSITIVE_INFINITY;
  if (word === '-inf') return Number.NEGATIVE_INFINITY;
  return undefined;
}

export const isWide = (value: bigint): boolean => value >= MIN_WIDE && value < 2n ** 63n;

/** A double as Tcl prints it: shortest form that reads back, always with a `.` or an exponent. */
export function formatDouble(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Inf' : '-Inf';
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e17 || abs < 1e-4)) {
    const [mantissa, exponent] = value.toExponential().split('e');
    const e = Number(exponent);
    return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  const text = String(value);
  return /[.e]/.test(text) ? text : `${text}.0`;
}

const TRUE_WORDS = new Set(['true', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', 'no', 'off']);

/** A string as a boolean (`if`, `&&`): a number (0 is false) or true/false/yes/no/on/off. */
export function parseBoolean(text: string): boolean {
  const number = parseNumber(text);
  if (typeof number === 'bigint') return number !== 0n;
  if (typeof number === 'number') return number !== 0;
  const word = text.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw new TclError(`expected boolean value but got "${clip(text)}"`);
}

/** A value quoted in an error message, cut so a message stays small. */
export const clip = (text: string): string => (text.length > 40 ? `${text.slice(0, 40)}...` : text);

/** An integer argument (`lindex`, `string range`, `incr`), with Tcl's `end` and `end-N` where allowed. */
export function parseIndex(text: string, length: number): number {
  const trimmed = text.trim();
  if (trimmed === 'end') return length - 1;
  const endMatch = /^end([+-])(\d{1,15})$/.exec(trimmed);
  if (endMatch) return length - 1 + (endMatch[1] === '-' ? -Number(endMatch[2]) : Number(endMatch[2]));
  const plus = /^(-?\d{1,15})([+-])(\d{1,15})$/.exec(trimmed);
  if (plus) return Number(plus[1]) + (plus[2] === '-' ? -Number(plus[3]) : Number(plus[3]));
  return parseIntArg(text);
}

/** A whole number argument, as a JS number (the sizes a rule handles are far below 2^53). */
export function parseIntArg(text: string): number {
  const value = parseNumber(text);
  if (typeof value !== 'bigint') throw new TclError(`expected integer but got "${clip(text)}"`);
  return Number(value);
}
