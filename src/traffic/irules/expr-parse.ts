// Reads an `expr` (and an `if` condition) into a tree, once: Tcl's operators by Tcl's precedence, with the
// rule language's own (`contains`, `starts_with`, `ends_with`, `equals`, `matches_glob`, `matches_regex`,
// and `and`/`or`/`not`), operands as Tcl reads them (numbers, `$var`, `[command]`, "quoted", {braced}).
import type { Expr, Script, Source, Value } from './model.ts';
import { ParseError, Parser } from './parse.ts';
import { compileRegex } from '../../lib/safe-regex.ts';
import { TclError } from './signals.ts';
import { parseNumber } from './values.ts';

export type { Expr, Value } from './model.ts';

/** Binary operators and their precedence (higher binds tighter), as Tcl 8.6's expr(n) orders them. */
export const BINARY: Readonly<Record<string, number>> = {
  '||': 1,
  or: 1,
  '&&': 2,
  and: 2,
  '|': 3,
  '^': 4,
  '&': 5,
  in: 6,
  ni: 6,
  eq: 7,
  ne: 7,
  contains: 7,
  starts_with: 7,
  ends_with: 7,
  equals: 7,
  matches_glob: 7,
  matches_regex: 7,
  '==': 8,
  '!=': 8,
  '<': 9,
  '>': 9,
  '<=': 9,
  '>=': 9,
  '<<': 10,
  '>>': 10,
  '+': 11,
  '-': 11,
  '*': 12,
  '/': 12,
  '%': 12,
  '**': 13,
};

/** The functions `expr` knows, with how many arguments each takes. */
export const FUNCTIONS: Readonly<Record<string, readonly [min: number, max: number]>> = {
  abs: [1, 1],
  int: [1, 1],
  wide: [1, 1],
  double: [1, 1],
  round: [1, 1],
  bool: [1, 1],
  min: [1, 64],
  max: [1, 64],
};

const SYMBOLS = ['**', '<<', '>>', '<=', '>=', '==', '!=', '&&', '||', '*', '/', '%', '+', '-', '<', '>', '&', '|', '^', '?', ':'];
const BOOLEAN_WORDS = new Set(['true', 'false', 'yes', 'no', 'on', 'off']);
const NUMBER = /0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/y;
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const MAX_DEPTH = 100;

/**
 * The expression in `source` between `start` and `end`.
 *
 * @example parseExpr(new Source('[HTTP::host] eq "a"')).k // 'bin'
 */
export function parseExpr(source: Source, start = 0, end = source.text.length): Expr {
  return new ExprReader(source, start, end).whole();
}

class ExprReader {
  private readonly text: string;
  private readonly parser: Parser;
  private pos: number;
  private readonly end: number;
  private depth = 0;
  constructor(source: Source, start: number, end: number) {
    this.text = source.text;
    this.parser = new Parser(source, end);
    this.pos = start;
    this.end = end;
  }

  whole(): Expr {
    if (this.skip() >= this.end) throw new ParseError('empty expression', this.pos);
    const expr = this.ternary();
    if (this.skip() < this.end) throw new ParseError(`unexpected "${this.text.slice(this.pos, this.pos + 10)}" in expression`, this.pos);
    this.parser.refuseUnsupported();
    return expr;
  }

  private skip(): number {
    while (this.pos < this.end && ' \t\n\v\f\r'.includes(this.text[this.pos]!)) this.pos++;
    if (this.text[this.pos] === '\\' && this.text[this.pos + 1] === '\n' && this.pos + 1 < this.end) {
      this.pos += 2;
      return this.skip();
    }
    return this.pos;
  }

  private nest(): void {
    if (++this.depth > MAX_DEPTH) throw new ParseError('expression nested too deeply', this.pos);
  }

  private ternary(): Expr {
    this.nest();
    const c = this.binary(1);
    let result = c;
    if (this.peekOperator() === '?') {
      this.pos++;
      const a = this.ternary();
      if (this.peekOperator() !== ':') throw new ParseError('missing ":" in ternary expression', this.pos);
      this.pos++;
      result = { k: 'tern', c, a, b: this.ternary() };
    }
    this.depth--;
    return result;
  }

  private binary(minimum: number): Expr {
    let left = this.unary();
    for (;;) {
      const op = this.peekOperator();
      const precedence = op === undefined ? undefined : BINARY[op];
      if (op === undefined || precedence === undefined || precedence < minimum) return left;
      this.pos += op.length;
      this.nest();
      const right = this.binary(op === '**' ? precedence : precedence + 1);
      this.depth--;
      left = op === 'matches_regex' && right.k === 'const' ? regexNode(left, right, this.pos) : { k: 'bin', op, a: left, b: right };
    }
  }

  /** The operator at the current position (skipping blanks), not consumed. */
  private peekOperator(): string | undefined {
    const pos = this.skip();
    if (pos >= this.end) return undefined;
    IDENT.lastIndex = pos;
    const word = IDENT.exec(this.text)?.[0];
    if (word !== undefined) return pos + word.length <= this.end ? word : undefined;
    return SYMBOLS.find((symbol) => this.text.startsWith(symbol, pos) && pos + symbol.length <= this.end);
  }

  private unary(): Expr {
    const pos = this.skip();
    if (pos >= this.end) throw new ParseError('missing operand', pos);
    const c = this.text[pos]!;
    if (c === '-' || c === '+' || c === '~' || c === '!') {
      this.pos++;
      this.nest();
      const a = this.unary();
      this.depth--;
      return { k: 'un', op: c, a };
    }
    return this.operand(pos, c);
  }

  private operand(pos: number, c: string): Expr {
    if (c === '(') {
      this.pos++;
      const inner = this.ternary();
      if (this.skip() >= this.end || this.text[this.pos] !== ')') throw new ParseError('missing close parenthesis', pos);
      this.pos++;
      return inner;
    }
    if (c === '$') {
      const [variable, next] = this.parser.variable(pos);
      if (typeof variable === 'string') throw new ParseError('missing variable name after $', pos);
      this.pos = next;
      return { k: 'var', name: variable.name };
    }
    if (c === '[') {
      const [script, next] = this.parser.command(pos);
      this.pos = next;
      return { k: 'cmd', script };
    }
    if (c === '"') {
      const [parts, next] = this.parser.quoted(pos);
      this.pos = next;
      if (parts.length === 0) return { k: 'const', v: '' };
      return parts.length === 1 && typeof parts[0] === 'string' ? { k: 'const', v: parts[0] } : { k: 'word', parts };
    }
    if (c === '{') {
      const [value, next] = this.parser.braced(pos);
      this.pos = next;
      return { k: 'const', v: value };
    }
    NUMBER.lastIndex = pos;
    const number = (c >= '0' && c <= '9') || c === '.' ? NUMBER.exec(this.text)?.[0] : undefined;
    if (number !== undefined && pos + number.length <= this.end) {
      this.pos = pos + number.length;
      const value = parseNumberLiteral(number, pos);
      return { k: 'const', v: value };
    }
    IDENT.lastIndex = pos;
    const word = IDENT.exec(this.text)?.[0];
    if (word === undefined || pos + word.length > this.end) throw new ParseError(`unexpected "${c}" in expression`, pos);
    this.pos = pos + word.length;
    if (word === 'not') {
      this.nest();
      const a = this.unary();
      this.depth--;
      return { k: 'un', op: '!', a };
    }
    if (this.skip() < this.end && this.text[this.pos] === '(') return this.call(word, pos);
    if (BOOLEAN_WORDS.has(word.toLowerCase())) return { k: 'const', v: word };
    throw new ParseError(`invalid bareword "${word}" in expression`, pos);
  }

  private call(name: string, at: number): Expr {
    const arity = FUNCTIONS[name];
    if (!arity) throw new ParseError(`unknown math function "${name}"`, at, true);
    this.pos++;
    const args: Expr[] = [];
    if (this.skip() < this.end && this.text[this.pos] === ')') this.pos++;
    else {
      for (;;) {
        args.push(this.ternary());
        const next = this.skip() < this.end ? this.text[this.pos] : undefined;
        this.pos++;
        if (next === ')') break;
        if (next !== ',') throw new ParseError(`missing close parenthesis after the arguments of ${name}()`, at);
      }
    }
    if (args.length < arity[0] || args.length > arity[1]) throw new ParseError(`wrong number of arguments for ${name}()`, at);
    return { k: 'fn', name, args };
  }
}

function parseNumberLiteral(text: string, at: number): Value {
  try {
    const value = parseNumber(text);
    if (value === undefined) throw new ParseError(`expected number but got "${text}" (a leading 0 means octal)`, at);
    return value;
  } catch (error) {
    if (error instanceof TclError) throw new ParseError(error.message, at);
    throw error;
  }
}

function regexNode(a: Expr, b: Extract<Expr, { k: 'const' }>, at: number): Expr {
  const regex = compileRegex(String(b.v));
  if (typeof regex === 'string') throw new ParseError(`regular expression ${regex}`, at);
  return { k: 'bin', op: 'matches_regex', a, b, regex };
}

/** The command substitutions of an expression, where the attach-time check looks for commands. */
export function exprScripts(expr: Expr, into: Script[] = []): Script[] {
  switch (expr.k) {
    case 'cmd':
      into.push(expr.script);
      break;
    case 'word':
      for (const part of expr.parts) if (typeof part !== 'string' && 'commands' in part) into.push(part);
      break;
    case 'un':
      exprScripts(expr.a, into);
      break;
    case 'bin':
      exprScripts(expr.a, into);
      exprScripts(expr.b, into);
      break;
    case 'tern':
      exprScripts(expr.c, into);
      exprScripts(expr.a, into);
      exprScripts(expr.b, into);
      break;
    case 'fn':
      for (const arg of expr.args) exprScripts(arg, into);
      break;
  }
  return into;
}
