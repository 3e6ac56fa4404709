// Evaluates an expression tree with Tcl's rules: integers are 64-bit and wrap (Tcl 8.4's wide ints, which the
// rule language speaks), `/` and `%` round towards minus infinity, `==` compares as numbers when both sides
// read as numbers and as strings otherwise, `&&`/`||`/`?:` evaluate only what they need.
import type { Expr, Value } from './expr-parse.ts';
import type { Run } from './model.ts';
import { compileRegex } from '../../lib/safe-regex.ts';
import { chargeSearch, findFirst } from './search.ts';
import { TclError } from './signals.ts';
import { clip, formatDouble, globMatch, listValues, parseBoolean, parseNumber } from './values.ts';

/** How a run substitutes a quoted word and reads a variable (interp.ts). */
export interface ExprHost extends Run {
  substitute(parts: Extract<Expr, { k: 'word' }>['parts']): string;
  variable(name: string): string;
}

/** A value as a string, the way Tcl prints it. */
export const valueString = (value: Value): string =>
  typeof value === 'string' ? value : typeof value === 'bigint' ? value.toString() : formatDouble(value);

/** A value as a condition (`if`, `while`, `&&`). */
export function truthy(value: Value): boolean {
  if (typeof value === 'bigint') return value !== 0n;
  if (typeof value === 'number') return value !== 0;
  return parseBoolean(value);
}

const wrap = (value: bigint): bigint => BigInt.asIntN(64, value);
const ONE = 1n;
const ZERO = 0n;

function numeric(value: Value, op: string): bigint | number {
  if (typeof value !== 'string') return value;
  const number = parseNumber(value);
  if (number === undefined) {
    throw new TclError(
      value === '' ? `can't use empty string as operand of "${op}"` : `can't use non-numeric string "${clip(value)}" as operand of "${op}"`,
    );
  }
  return number;
}

function integer(value: Value, op: string): bigint {
  const number = numeric(value, op);
  if (typeof number !== 'bigint') throw new TclError(`can't use floating-point value as operand of "${op}"`);
  return number;
}

/** Both sides as numbers when both read as numbers (string comparison otherwise). */
function numbers(a: Value, b: Value): [bigint | number, bigint | number] | undefined {
  const x = typeof a === 'string' ? parseNumber(a) : a;
  if (x === undefined) return undefined;
  const y = typeof b === 'string' ? parseNumber(b) : b;
  return y === undefined ? undefined : [x, y];
}

/**
 * The value of `expr`.
 *
 * @example evaluate(run, parseExpr(new Source('7 / -2'))) // -4n
 */
export function evaluate(run: ExprHost, expr: Expr): Value {
  run.step();
  switch (expr.k) {
    case 'const':
      return expr.v;
    case 'var':
      return run.variable(expr.name);
    case 'cmd':
      return run.script(expr.script);
    case 'word':
      return run.substitute(expr.parts);
    case 'tern':
      return truthy(evaluate(run, expr.c)) ? evaluate(run, expr.a) : evaluate(run, expr.b);
    case 'un':
      return unary(expr.op, evaluate(run, expr.a));
    case 'fn':
      return call(
        expr.name,
        expr.args.map((arg) => evaluate(run, arg)),
      );
    case 'bin': {
      const op = expr.op;
      if (op === '&&' || op === 'and') return truthy(evaluate(run, expr.a)) && truthy(evaluate(run, expr.b)) ? ONE : ZERO;
      if (op === '||' || op === 'or') return truthy(evaluate(run, expr.a)) || truthy(evaluate(run, expr.b)) ? ONE : ZERO;
      const a = evaluate(run, expr.a);
      const b = evaluate(run, expr.b);
      if (op === 'matches_regex') {
        const subject = valueString(a);
        run.step(1 + (subject.length >> 10));
        return matchRegex(expr.regex, valueString(b), subject) ? ONE : ZERO;
      }
      return binary(run, op, a, b);
    }
  }
}

function matchRegex(compiled: RegExp | undefined, pattern: string, subject: string): boolean {
  const regex = compiled ?? compileRegex(pattern);
  if (typeof regex === 'string') throw new TclError(`regular expression ${regex}`);
  return regex.test(subject);
}

function unary(op: string, a: Value): Value {
  if (op === '!') return truthy(a) ? ZERO : ONE;
  if (op === '~') return wrap(~integer(a, op));
  const number = numeric(a, op);
  if (op === '+') return number;
  return typeof number === 'bigint' ? wrap(-number) : -number;
}

/** Characters of an operand held as a string (a number's text is short): what comparing or scanning it reads. */
const size = (value: Value): number => (typeof value === 'string' ? value.length : 0);

function binary(run: Run, op: string, a: Value, b: Value): Value {
  // Work proportional to the operands' length is counted against the steps, as `llength` counts it.
  run.step((size(a) + size(b)) >> 10);
  switch (op) {
    case 'eq':
      return valueString(a) === valueString(b) ? ONE : ZERO;
    case 'ne':
      return valueString(a) !== valueString(b) ? ONE : ZERO;
    case 'equals':
      return valueString(a) === valueString(b) ? ONE : ZERO;
    case 'contains':
    case 'starts_with':
    case 'ends_with':
    case 'matches_glob': {
      const x = valueString(a);
      const y = valueString(b);
      run.step(1 + ((x.length + y.length) >> 10));
      if (op === 'contains') {
        chargeSearch(run, x, y);
        return findFirst(x, y) !== -1 ? ONE : ZERO;
      }
      if (op === 'starts_with') return x.startsWith(y) ? ONE : ZERO;
      if (op === 'ends_with') return x.endsWith(y) ? ONE : ZERO;
      run.step((x.length * y.length) >> 12);
      return globMatch(y, x) ? ONE : ZERO;
    }
    case 'in':
    case 'ni': {
      const found = listValues(valueString(b)).includes(valueString(a));
      return found === (op === 'in') ? ONE : ZERO;
    }
    case '==':
    case '!=':
    case '<':
    case '>':
    case '<=':
    case '>=':
      return compare(op, a, b) ? ONE : ZERO;
  }
  return arithmetic(op, a, b);
}

function compare(op: string, a: Value, b: Value): boolean {
  const pair = numbers(a, b);
  const [x, y]: [bigint | number | string, bigint | number | string] = pair ?? [valueString(a), valueString(b)];
  switch (op) {
    case '==':
      // biome-ignore lint/suspicious/noDoubleEquals: a bigint and a double compare by value only with ==.
      return x == y;
    case '!=':
      // biome-ignore lint/suspicious/noDoubleEquals: as above.
      return x != y;
    case '<':
      return x < y;
    case '>':
      return x > y;
    case '<=':
      return x <= y;
    default:
      return x >= y;
  }
}

function arithmetic(op: string, a: Value, b: Value): Value {
  if (op === '<<' || op === '>>' || op === '&' || op === '|' || op === '^' || op === '%')
    return integers(op, integer(a, op), integer(b, op));
  const x = numeric(a, op);
  const y = numeric(b, op);
  if (typeof x === 'bigint' && typeof y === 'bigint') return integers(op, x, y);
  const p = Number(x);
  const q = Number(y);
  switch (op) {
    case '+':
      return p + q;
    case '-':
      return p - q;
    case '*':
      return p * q;
    case '/':
      return p / q;
    case '**':
      return p ** q;
  }
  throw new TclError(`unknown operator "${op}"`);
}

function integers(op: string, x: bigint, y: bigint): bigint {
  switch (op) {
    case '+':
      return wrap(x + y);
    case '-':
      return wrap(x - y);
    case '*':
      return wrap(x * y);
    case '/': {
      if (y === ZERO) throw new TclError('divide by zero');
      let q = x / y;
      if (x % y !== ZERO && x < ZERO !== y < ZERO) q -= ONE;
      return wrap(q);
    }
    case '%': {
      if (y === ZERO) throw new TclError('divide by zero');
      let r = x % y;
      if (r !== ZERO && r < ZERO !== y < ZERO) r += y;
      return r;
    }
    case '**':
      return power(x, y);
    case '<<':
    case '>>':
      if (y < ZERO) throw new TclError('negative shift argument');
      if (y >= 64n) return op === '<<' || x >= ZERO ? ZERO : -ONE;
      return op === '<<' ? wrap(x << y) : x >> y;
    case '&':
      return x & y;
    case '|':
      return x | y;
    case '^':
      return x ^ y;
  }
  throw new TclError(`unknown operator "${op}"`);
}

// Square and multiply, wrapping at each step: at most 64 rounds whatever the exponent.
function power(base: bigint, exponent: bigint): bigint {
  if (exponent < ZERO) {
    if (base === ZERO) throw new TclError('exponentiation of zero by negative power');
    if (base === ONE) return ONE;
    if (base === -ONE) return exponent % 2n === ZERO ? ONE : -ONE;
    return ZERO;
  }
  let result = ONE;
  let square = base;
  for (let e = exponent; e > ZERO; e >>= ONE) {
    if (e & ONE) result = wrap(result * square);
    square = wrap(square * square);
  }
  return result;
}

function call(name: string, args: Value[]): Value {
  const numbers = args.map((arg) => numeric(arg, `${name}()`));
  const [x] = numbers as [bigint | number];
  switch (name) {
    case 'abs':
      return typeof x === 'bigint' ? wrap(x < ZERO ? -x : x) : Math.abs(x);
    case 'int':
    case 'wide':
      return typeof x === 'bigint' ? x : toWide(Math.trunc(x));
    case 'double':
      return Number(x);
    case 'round':
      return typeof x === 'bigint' ? x : toWide(x < 0 ? -Math.round(-x) : Math.round(x));
    case 'bool':
      return truthy(args[0]!) ? ONE : ZERO;
    case 'min':
    case 'max':
      return numbers.reduce((best, value) => ((name === 'min' ? value < best : value > best) ? value : best));
  }
  throw new TclError(`unknown math function "${name}"`);
}

function toWide(value: number): bigint {
  if (!Number.isFinite(value)) throw new TclError('integer value too large to represent');
  return wrap(BigInt(value));
}
