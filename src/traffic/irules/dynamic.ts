// What a rule builds at run time and then runs as code (`expr $a + 1`, a `switch` list in a variable):
// compiled by the same walk as at attach time, and kept by text in a small cache shared by the service's
// connections, so a rule that does this on every request parses each distinct text once.
import { AttachError, attachScript, compileWordArms } from './attach.ts';
import { exprScripts, type Expr, parseExpr } from './expr-parse.ts';
import { type Command, type Script, Source, type SwitchArm } from './model.ts';
import { ParseError, parseScript } from './parse.ts';
import type { CommandSpec } from './model.ts';
import { TclError } from './signals.ts';

const CACHE_SIZE = 256;
// Longer texts are compiled each time (their parse is counted against the run's steps): the cache stays small.
const MAX_CACHED_TEXT = 4096;

export class Dynamic {
  private readonly scripts = new Map<string, Script>();
  private readonly exprs = new Map<string, Expr>();
  private readonly arms = new Map<string, SwitchArm[]>();

  script(text: string, line: number): Script {
    return cached(this.scripts, text, () => {
      const script = parseScript(new Source(text, line));
      attachScript(script);
      return script;
    });
  }

  expr(text: string, line: number): Expr {
    return cached(this.exprs, text, () => {
      const expr = parseExpr(new Source(text, line));
      for (const script of exprScripts(expr)) attachScript(script);
      return expr;
    });
  }

  switchArms(text: string, line: number): SwitchArm[] {
    return cached(this.arms, text, () =>
      compileWordArms({ literal: text, parts: [], start: 0, end: text.length, braced: false, line, source: new Source(text, line) }),
    );
  }

  /** A command whose name was not written out: never attached (attach.ts refuses it), so only a safety net. */
  resolve(command: Command, name: string): CommandSpec {
    throw new TclError(`invalid command name "${name}"`, command.line);
  }
}

function cached<T>(cache: Map<string, T>, text: string, compile: () => T): T {
  const keep = text.length <= MAX_CACHED_TEXT;
  const hit = keep ? cache.get(text) : undefined;
  if (hit !== undefined) return hit;
  let value: T;
  try {
    value = compile();
  } catch (error) {
    if (error instanceof ParseError || error instanceof AttachError) throw new TclError(error.message);
    throw error;
  }
  if (!keep) return value;
  if (cache.size >= CACHE_SIZE) cache.clear();
  cache.set(text, value);
  return value;
}
