// Reads a Tcl script into its compiled form, by the rules the checker (tcl-check.ts) reads it: Tcl 8.6's
// Dodekalogue. The checker runs first, so its problems are the ones a user sees; this parser also gives
// each word its pieces (text with backslashes substituted, `$variables`, `[command substitutions]`) and
// refuses what the interpreter does not do: `{*}` argument expansion and `$array(index)` variables.
// `parse.test.ts` proves, over random texts, that the two agree on what reads.
import type { Command, Part, Script, Source, Word } from './model.ts';
import { backslashAt } from './values.ts';
import { SPACES, TclCursor } from './tcl-cursor.ts';

const MAX_DEPTH = 100;

/** Why a text does not read; `unsupported` when Tcl reads it but the interpreter does not run it. */
export class ParseError extends Error {
  at: number;
  unsupported: boolean;
  constructor(message: string, at: number, unsupported = false) {
    super(message);
    this.at = at;
    this.unsupported = unsupported;
  }
}

/**
 * A script of `source` between `start` and `end` (a whole rule, or a braced body read from the rule's text).
 *
 * @example parseScript(new Source('set a 1; set b [set a]')).commands.length // 2
 */
export function parseScript(source: Source, start = 0, end = source.text.length): Script {
  const parser = new Parser(source, end);
  const [script] = parser.script(start, undefined);
  parser.refuseUnsupported();
  return script;
}

/** Reads text with substitutions; the expression reader uses its `[`, `$` and `"` readers too. */
export class Parser extends TclCursor {
  readonly source: Source;
  private depth = 0;
  // What Tcl reads but the interpreter does not run: the whole text is read first (so that a problem Tcl
  // itself has is the one reported, as the checker reports it), then the first of these is.
  private unsupported: ParseError | undefined;
  constructor(source: Source, end: number) {
    super(source.text, end);
    this.source = source;
  }

  /** Throws the first construct read that the interpreter does not run. */
  refuseUnsupported(): void {
    if (this.unsupported) throw this.unsupported;
  }

  /** Commands up to the end, or inside `[` (openBracket set) up to its `]`: the script and the index after it. */
  script(pos: number, openBracket: number | undefined): [Script, number] {
    const nested = openBracket !== undefined;
    const commands: Command[] = [];
    for (;;) {
      pos = this.skipToCommand(pos);
      const words: Word[] = [];
      for (;;) {
        pos = this.skipSpace(pos);
        const c = this.text[pos];
        if (pos >= this.end || c === '\n' || c === ';' || (nested && c === ']')) {
          if (words.length > 0) commands.push({ line: words[0]!.line, words });
          if (pos >= this.end) {
            if (nested) throw new ParseError('missing close-bracket', openBracket);
            return [{ commands }, pos];
          }
          if (c === ']') return [{ commands }, pos + 1];
          pos++;
          break;
        }
        const word = this.word(pos, nested);
        words.push(word);
        pos = word.end;
        const next = this.text[pos];
        if (
          pos < this.end &&
          !this.isSpace(pos) &&
          !this.isContinuation(pos) &&
          next !== '\n' &&
          next !== ';' &&
          !(nested && next === ']')
        ) {
          throw new ParseError(word.braced ? 'extra characters after close-brace' : 'extra characters after close-quote', pos);
        }
      }
    }
  }

  private word(start: number, nested: boolean, mayExpand = true): Word {
    const c = this.text[start];
    const line = this.source.lineAt(start);
    if (c === '{') {
      const [value, end] = this.braced(start);
      const next = this.text[end];
      if (
        mayExpand &&
        value === '*' &&
        end < this.end &&
        !this.isSpace(end) &&
        !this.isContinuation(end) &&
        next !== '\n' &&
        next !== ';'
      ) {
        this.unsupported ??= new ParseError('{*} (argument expansion) is not supported', start, true);
        return this.word(end, nested, false);
      }
      return { literal: value, parts: [], start, end, braced: true, line, source: this.source };
    }
    if (c === '"') {
      const [parts, close] = this.tokens(start + 1, '"', false);
      if (close >= this.end) throw new ParseError('missing "', start);
      return makeWord(parts, start, close + 1, line, this.source);
    }
    const [parts, end] = this.tokens(start, nested ? `${SPACES}\n;]` : `${SPACES}\n;`, true);
    return makeWord(parts, start, end, line, this.source);
  }

  /** A braced word at `open`: its value (verbatim but for backslash-newlines) and the index after it. */
  braced(open: number): [string, number] {
    let level = 0;
    let value = '';
    let from = open + 1;
    for (let pos = open; pos < this.end; pos++) {
      const c = this.text[pos];
      if (c === '\\') {
        if (this.text[pos + 1] === '\n' && pos + 1 < this.end) {
          const [space, next] = backslashAt(this.text, pos, this.end);
          value += this.text.slice(from, pos) + space;
          from = next;
          pos = next - 1;
        } else pos++;
      } else if (c === '{') level++;
      else if (c === '}' && --level === 0) return [value + this.text.slice(from, pos), pos + 1];
    }
    throw new ParseError('missing close-brace', open);
  }

  /** A quoted word at `open` (`"`): its pieces and the index after the close-quote. */
  quoted(open: number): [Part[], number] {
    const [parts, close] = this.tokens(open + 1, '"', false);
    if (close >= this.end) throw new ParseError('missing "', open);
    return [parts, close + 1];
  }

  /** Characters with substitutions up to one of `stops` or the end: the pieces and where it stopped. */
  tokens(pos: number, stops: string, continuationStops: boolean): [Part[], number] {
    const parts: Part[] = [];
    let text = '';
    let from = pos;
    while (pos < this.end) {
      const c = this.text[pos]!;
      if (stops.includes(c)) break;
      if (c === '\\') {
        if (continuationStops && this.isContinuation(pos)) break;
        const [value, next] = backslashAt(this.text, pos, this.end);
        text += this.text.slice(from, pos) + value;
        pos = from = Math.min(next, this.end);
      } else if (c === '[') {
        text += this.text.slice(from, pos);
        if (text) parts.push(text);
        text = '';
        const [script, next] = this.command(pos);
        parts.push(script);
        pos = from = next;
      } else if (c === '$') {
        const [variable, next] = this.variable(pos);
        if (typeof variable === 'string') {
          pos = next;
          continue;
        }
        text += this.text.slice(from, pos);
        if (text) parts.push(text);
        text = '';
        parts.push(variable);
        pos = from = next;
      } else pos++;
    }
    text += this.text.slice(from, Math.min(pos, this.end));
    if (text) parts.push(text);
    return [parts, Math.min(pos, this.end)];
  }

  /** A command substitution at `open` (`[`): its script and the index after the `]`. */
  command(open: number): [Script, number] {
    if (++this.depth > MAX_DEPTH) throw new ParseError('nesting too deep', open);
    const result = this.script(open + 1, open);
    this.depth--;
    return result;
  }

  /** A variable at `dollar`: its name, or the `$` itself (a string) when no name follows; and where it ends. */
  variable(dollar: number): [{ name: string } | string, number] {
    let pos = dollar + 1;
    if (pos < this.end && this.text[pos] === '{') {
      const close = this.text.indexOf('}', pos + 1);
      if (close === -1 || close >= this.end) throw new ParseError('missing close-brace for variable name', dollar);
      return [{ name: globalName(this.text.slice(pos + 1, close)) }, close + 1];
    }
    while (pos < this.end) {
      const c = this.text.charCodeAt(pos);
      if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f) pos++;
      else if (c === 0x3a && pos + 1 < this.end && this.text[pos + 1] === ':') {
        pos += 2;
        while (pos < this.end && this.text[pos] === ':') pos++;
      } else break;
    }
    // `$(x)` is the array with the empty name; a `$` followed by nothing of a name is a character.
    if (pos === dollar + 1 && this.text[pos] !== '(') return ['$', pos];
    if (pos < this.end && this.text[pos] === '(') {
      // Read the index as Tcl would (so a problem in it is the same problem), then refuse arrays.
      if (++this.depth > MAX_DEPTH) throw new ParseError('nesting too deep', pos);
      const [, close] = this.tokens(pos + 1, ')', false);
      this.depth--;
      if (close >= this.end) throw new ParseError('missing )', pos);
      this.unsupported ??= new ParseError('array variables ($name(index)) are not supported', dollar, true);
      return [{ name: '' }, close + 1];
    }
    return [{ name: globalName(this.text.slice(dollar + 1, pos)) }, pos];
  }
}

// `$::name` is the global `name`; a rule has one scope per connection, so both are the same variable.
const globalName = (name: string): string => (name.startsWith('::') ? name.replace(/^:+/, '') : name);

function makeWord(parts: Part[], start: number, end: number, line: number, source: Source): Word {
  const literal = parts.length === 0 ? '' : parts.length === 1 && typeof parts[0] === 'string' ? parts[0] : undefined;
  return { literal, parts: literal === undefined ? parts : [], start, end, braced: false, line, source };
}

/** The line of a parse problem. */
export const problemLine = (source: Source, error: ParseError): number => source.lineAt(error.at);
