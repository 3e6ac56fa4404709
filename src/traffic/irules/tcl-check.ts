// Checks a device script object (an iRule-like Tcl script) the way Tcl 8.6 reads it, before it is stored:
// the rules of Tcl_ParseCommand and `info complete` (the Dodekalogue); nothing is evaluated. The device
// refuses an incomplete script with `incomplete command` (its own apiError), so `incomplete` is kept apart from `syntax`.
// The first problem wins, as in Tcl's parser: the whole text is read first, then each `when` body.
// Each character is read once by the outer pass (a command substitution is read by the nested level
// only) and once more inside a `when` body, and command substitutions nest at most MAX_DEPTH deep (Tcl
// itself crashes on a megabyte of `[`), so a hostile string can neither take long nor exhaust the stack.
// No regular expression reads an unbounded part of the text (one that backtracks is quadratic): the
// work is linear in the length, whatever the text (tcl-script.test.ts measures it over sizes).
import { SPACES, TclCursor } from './tcl-cursor.ts';

export type ScriptCheck = { ok: true } | { ok: false; kind: 'incomplete' | 'syntax'; detail: string; line: number };

const MAX_DEPTH = 100;
const NAME_CHAR = /[A-Za-z0-9_]/;

class Problem {
  kind: 'incomplete' | 'syntax';
  detail: string;
  at: number;
  constructor(kind: 'incomplete' | 'syntax', detail: string, at: number) {
    this.kind = kind;
    this.detail = detail;
    this.at = at;
  }
}

type Word = { start: number; end: number; braced: boolean; quoted: boolean };

/** `line` is 1-based: where the unclosed brace, quote or bracket opened, or where the stray text starts. */
export function checkScript(text: string): ScriptCheck {
  if (/^[ \t\n\v\f\r]*$/.test(text)) return { ok: false, kind: 'incomplete', detail: 'empty script', line: 1 };
  try {
    // The text as a whole first (what the device answers `incomplete command` for), then each body.
    const bodies: Word[] = [];
    new Scanner(text, text.length).script(0, undefined, (words) => {
      const body = whenBody(text, words);
      if (body) bodies.push(body);
    });
    // A final backslash-newline promises another line: Tcl's `info complete` says no, without any message.
    if (endsWithContinuation(text)) throw new Problem('incomplete', 'backslash-newline at end', text.length - 2);
    for (const body of bodies) new Scanner(text, body.end - 1).script(body.start + 1, undefined);
    return { ok: true };
  } catch (error) {
    if (!(error instanceof Problem)) throw error;
    return { ok: false, kind: error.kind, detail: error.detail, line: lineAt(text, error.at) };
  }
}

// `when EVENT [priority N] { body }`: the body is itself a script, run later by the device, so it must
// be complete and valid too. Its braces were already matched by the outer level; its comments, quotes
// and brackets are only seen when it is read as a script.
function whenBody(text: string, words: Word[]): Word | undefined {
  const [first] = words;
  const body = words.at(-1);
  if (!first || !body || words.length < 3 || !body.braced) return undefined;
  const name = first.braced || first.quoted ? text.slice(first.start + 1, first.end - 1) : text.slice(first.start, first.end);
  return name === 'when' ? body : undefined;
}

/**
 * Whether the text ends in a newline escaped by an odd run of backslashes. Counted backwards from the
 * end: a regular expression such as /(\\+)\n$/ tries every start of a run and reads the rest of it each
 * time, quadratic in a run's length (64 KiB of backslashes took 3.5 s).
 */
function endsWithContinuation(text: string): boolean {
  if (!text.endsWith('\n')) return false;
  let pos = text.length - 2;
  while (pos >= 0 && text[pos] === '\\') pos--;
  return (text.length - 2 - pos) % 2 === 1;
}

function lineAt(text: string, at: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

// Reads text up to `end` as a Tcl script; positions are always indexes into the whole text.
class Scanner extends TclCursor {
  depth = 0;

  /** Commands up to the end; inside `[` (openBracket set) up to the `]` that closes it: returns the index after it. */
  script(pos: number, openBracket: number | undefined, onCommand?: (words: Word[]) => void): number {
    const nested = openBracket !== undefined;
    for (;;) {
      pos = this.skipToCommand(pos);
      const words: Word[] = [];
      for (;;) {
        pos = this.skipSpace(pos);
        const c = this.text[pos];
        if (pos >= this.end || c === '\n' || c === ';' || (nested && c === ']')) {
          if (words.length > 0) onCommand?.(words);
          if (pos >= this.end) {
            if (nested) throw new Problem('incomplete', 'missing close-bracket', openBracket);
            return pos;
          }
          if (c === ']') return pos + 1;
          pos++;
          break;
        }
        const word = this.word(pos, nested, true);
        words.push(word);
        pos = word.end;
        // After a braced or quoted word only a separator may follow (a bare word always ends at one).
        const next = this.text[pos];
        if (
          pos < this.end &&
          !this.isSpace(pos) &&
          !this.isContinuation(pos) &&
          next !== '\n' &&
          next !== ';' &&
          !(nested && next === ']')
        ) {
          throw new Problem('syntax', word.quoted ? 'extra characters after close-quote' : 'extra characters after close-brace', pos);
        }
      }
    }
  }

  private word(start: number, nested: boolean, mayExpand: boolean): Word {
    const c = this.text[start];
    if (c === '{') {
      const end = this.braced(start);
      // `{*}` directly followed by more word is the expansion prefix: the word proper starts after it.
      const next = this.text[end];
      if (
        mayExpand &&
        end - start === 3 &&
        this.text[start + 1] === '*' &&
        end < this.end &&
        !this.isSpace(end) &&
        !this.isContinuation(end) &&
        next !== '\n' &&
        next !== ';'
      ) {
        return this.word(end, nested, false);
      }
      return { start, end, braced: true, quoted: false };
    }
    if (c === '"') {
      const close = this.tokens(start + 1, '"', false);
      if (close >= this.end) throw new Problem('incomplete', 'missing "', start);
      return { start, end: close + 1, braced: false, quoted: true };
    }
    const end = this.tokens(start, nested ? `${SPACES}\n;]` : `${SPACES}\n;`, true);
    return { start, end, braced: false, quoted: false };
  }

  // Braces only count braces: quotes, brackets, `$` and comments inside do not matter, a backslash
  // escapes the next character.
  private braced(open: number): number {
    let level = 0;
    for (let pos = open; pos < this.end; pos++) {
      const c = this.text[pos];
      if (c === '\\') pos++;
      else if (c === '{') level++;
      else if (c === '}' && --level === 0) return pos + 1;
    }
    const hint = this.braceInComment(open) ? ': possible unbalanced brace in comment' : '';
    throw new Problem('incomplete', `missing close-brace${hint}`, open);
  }

  // Tcl's own guess, kept for the same message: an open brace after a `<whitespace>#` on one line.
  private braceInComment(open: number): boolean {
    let openBrace = false;
    for (let pos = this.end - 1; pos > open; pos--) {
      const c = this.text[pos];
      if (c === '{') openBrace = true;
      else if (c === '\n') openBrace = false;
      else if (c === '#' && openBrace && ' \t\n\v\f\r'.includes(this.text[pos - 1]!)) return true;
    }
    return false;
  }

  /** Tcl's ParseTokens: characters with substitutions up to one of `stops` (returned) or the end. */
  private tokens(pos: number, stops: string, continuationStops: boolean): number {
    while (pos < this.end) {
      const c = this.text[pos]!;
      if (stops.includes(c)) return pos;
      if (c === '\\') {
        if (continuationStops && this.isContinuation(pos)) return pos;
        pos += 2;
      } else if (c === '[') {
        pos = this.nest(pos, () => this.script(pos + 1, pos));
      } else if (c === '$') {
        pos = this.variable(pos);
      } else {
        pos++;
      }
    }
    return this.end;
  }

  private nest(at: number, parse: () => number): number {
    if (++this.depth > MAX_DEPTH) throw new Problem('syntax', 'nesting too deep', at);
    const end = parse();
    this.depth--;
    return end;
  }

  // `${name}` runs to the first `}`; `$name(index)` has an index with its own substitutions up to `)`;
  // a `$` with no name is just a character.
  private variable(dollar: number): number {
    let pos = dollar + 1;
    if (pos < this.end && this.text[pos] === '{') {
      const close = this.text.indexOf('}', pos + 1);
      if (close === -1 || close >= this.end) throw new Problem('incomplete', 'missing close-brace for variable name', dollar);
      return close + 1;
    }
    while (pos < this.end) {
      if (NAME_CHAR.test(this.text[pos]!)) pos++;
      else if (this.text[pos] === ':' && pos + 1 < this.end && this.text[pos + 1] === ':') {
        pos += 2;
        while (pos < this.end && this.text[pos] === ':') pos++;
      } else break;
    }
    if (pos >= this.end || this.text[pos] !== '(') return pos;
    const open = pos;
    const close = this.nest(open, () => this.tokens(open + 1, ')', false));
    if (close >= this.end) throw new Problem('incomplete', 'missing )', open);
    return close + 1;
  }
}
