// The check a rule passes when it is attached: every command name is written out and known, every body
// (`if`, `switch`, `foreach`...) and written-out expression reads, and each is compiled then, once, onto
// its word. The same walk compiles what a rule builds at run time (`expr $a + 1`), with its problems then
// being run-time errors.
import { exprScripts, parseExpr } from './expr-parse.ts';
import { type Command, type Script, Source, type SwitchArm, type Word } from './model.ts';
import { ParseError, parseScript } from './parse.ts';
import { COMMANDS } from './registry.ts';
import { splitList } from './values.ts';

/** Why a rule's code cannot run: the message, its line in the rule's text, and the command when one is at fault. */
export class AttachError extends Error {
  line: number;
  command: string | undefined;
  constructor(message: string, line: number, command?: string) {
    super(message);
    this.line = line;
    this.command = command;
  }
}

/** How deep scripts may nest when attached (bodies in bodies, substitutions in them): what a run may go (MAX_RUN_DEPTH). */
const MAX_ATTACH_DEPTH = 200;
let depth = 0;

/** Resolves every command of `script` (and of its bodies) and compiles the bodies; throws AttachError. */
export function attachScript(script: Script): void {
  // Each body is read on its own, so the reader's own bound on nesting does not hold across bodies: this one does.
  if (depth >= MAX_ATTACH_DEPTH) {
    throw new AttachError(`scripts nested more than ${MAX_ATTACH_DEPTH} deep`, script.commands[0]?.line ?? 1);
  }
  depth++;
  try {
    for (const command of script.commands) attachCommand(command);
  } finally {
    depth--;
  }
}

function attachCommand(command: Command): void {
  const [nameWord, ...argWords] = command.words as [Word, ...Word[]];
  const name = nameWord.literal;
  if (name === undefined) {
    throw new AttachError(
      'a command name computed when the rule runs (such as [set cmd]) is refused: only a name written out can be checked',
      command.line,
    );
  }
  const spec = COMMANDS.get(name);
  if (!spec) throw new AttachError(`unknown command "${name}"`, command.line, name);
  command.spec = spec;
  for (const word of command.words) for (const part of word.parts) if (typeof part !== 'string' && 'commands' in part) attachScript(part);
  const shape = spec.shape?.(argWords.map((word) => word.literal)) ?? [];
  if (typeof shape === 'string') throw new AttachError(shape, command.line, name);
  for (const role of shape) {
    const word = argWords[role.index];
    if (!word) continue;
    if (word.literal === undefined) {
      if (role.kind === 'expr') continue;
      throw new AttachError(`the body of "${name}" must be written out (in braces), not computed when the rule runs`, word.line, name);
    }
    if (role.kind === 'script') word.script = compileBody(word);
    else if (role.kind === 'expr') word.expr = compileExpr(word);
    else word.arms = compileArms(word);
  }
}

/** Where a literal word's text can be read from: the rule's own text when nothing was substituted in it. */
function origin(word: Word): [Source, number, number] {
  if (word.braced) {
    const inner = word.source.text.slice(word.start + 1, word.end - 1);
    if (inner === word.literal) return [word.source, word.start + 1, word.end - 1];
  }
  const value = word.literal ?? '';
  return [new Source(value, word.line), 0, value.length];
}

function reading<T>(source: Source, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ParseError) throw new AttachError(error.message, source.lineAt(error.at));
    throw error;
  }
}

function compileBody(word: Word): Script {
  const [source, start, end] = origin(word);
  const script = reading(source, () => parseScript(source, start, end));
  attachScript(script);
  return script;
}

function compileExpr(word: Word) {
  const [source, start, end] = origin(word);
  const expr = reading(source, () => parseExpr(source, start, end));
  for (const script of exprScripts(expr)) attachScript(script);
  return expr;
}

function compileArms(word: Word): SwitchArm[] {
  const [source, start] = origin(word);
  const elements = reading(source, () => {
    try {
      return splitList(word.literal ?? '');
    } catch (error) {
      throw new ParseError((error as Error).message, start);
    }
  });
  if (elements.length % 2 === 1) throw new AttachError('extra switch pattern with no body', word.line, 'switch');
  const arms: SwitchArm[] = [];
  for (let i = 0; i < elements.length; i += 2) {
    const body = elements[i + 1]!;
    if (body.value === '-') {
      arms.push({ pattern: elements[i]!.value, body: undefined });
      continue;
    }
    const at = start + body.start;
    const own = source === word.source && body.braced ? source : new Source(body.value, source.lineAt(at));
    const script = reading(own, () => (own === source ? parseScript(source, at, at + body.value.length) : parseScript(own)));
    attachScript(script);
    arms.push({ pattern: elements[i]!.value, body: script });
  }
  if (arms.length > 0 && arms.at(-1)!.body === undefined)
    throw new AttachError('no body specified for the last switch pattern', word.line, 'switch');
  return arms;
}

/** A `switch` list computed at run time, compiled (dynamic.ts). */
export const compileWordArms = compileArms;
