// What the checker (tcl-check.ts) and the interpreter's parser (parse.ts) read alike: Tcl's separators and
// comments between commands. One copy, so the two can never disagree on where a command starts.

// Tcl's word separators (TYPE_SPACE); a newline is not one of them: it ends the command.
export const SPACES = ' \t\v\f\r';

/** A position-based reader of Tcl text up to `end` (the end of a script, or of a body inside it). */
export class TclCursor {
  readonly text: string;
  readonly end: number;
  constructor(text: string, end: number) {
    this.text = text;
    this.end = end;
  }

  protected isSpace(pos: number): boolean {
    return pos < this.end && SPACES.includes(this.text[pos]!);
  }

  // A backslash-newline is a word separator everywhere except inside braces and quotes.
  protected isContinuation(pos: number): boolean {
    return this.text[pos] === '\\' && pos + 1 < this.end && this.text[pos + 1] === '\n';
  }

  // Tcl's ParseComment: blanks and newlines before a command, and `#` comments running to the end of the
  // line, where a backslash escapes any character (so a backslash-newline continues the comment).
  protected skipToCommand(pos: number): number {
    for (;;) {
      pos = this.skipSpace(pos);
      if (pos < this.end && this.text[pos] === '\n') {
        pos++;
        continue;
      }
      if (pos >= this.end || this.text[pos] !== '#') return pos;
      while (pos < this.end) {
        const c = this.text[pos++];
        if (c === '\n') break;
        if (c === '\\') pos++;
      }
      pos = Math.min(pos, this.end);
    }
  }

  protected skipSpace(pos: number): number {
    for (;;) {
      if (this.isSpace(pos)) pos++;
      else if (this.isContinuation(pos)) pos += 2;
      else return pos;
    }
  }
}
