// A bounded reader of the device's configuration files in tmsh syntax (config/bigip.conf and its
// siblings): one linear pass, no regular expressions over the text, no recursion deeper than
// `maxDepth`. Why not a library: the one parser made for this (npm f5-corkscrew) reads its archives
// with dependencies we refuse (decompress, object-path), builds a tree of every object of a
// multi-megabyte file, and gives no bound on nesting or time; this reader keeps only the objects its
// caller asks for and skips the rest without building anything.

/** One line (entry) of an object's body: its words, and the block that ends it, if any. */
export type TmshNode = { readonly words: readonly string[]; readonly block?: readonly TmshNode[] };

/** A top-level object kept: its header (`ltm pool /Common/web`), its body as entries, or its raw text (scripts). */
export type TmshObject = {
  readonly header: readonly string[];
  readonly block?: readonly TmshNode[];
  /** The text between the braces of a script object (`ltm rule`), one leading and one trailing `\n` removed (as tmsh writes them). */
  readonly raw?: string;
  /** 1-based line of the header. */
  readonly line: number;
};

export type TmshLimits = {
  /** Nesting of blocks inside one kept object. */
  readonly maxDepth: number;
  /** Words and entries of one kept object. */
  readonly maxObjectItems: number;
  /** Kept objects of one file. */
  readonly maxObjects: number;
};

export const DEFAULT_TMSH_LIMITS: TmshLimits = Object.freeze({ maxDepth: 32, maxObjectItems: 200_000, maxObjects: 100_000 });

export type TmshParse = {
  objects: TmshObject[];
  /** The `#TMSH-VERSION:` comment at the top of a saved file. */
  tmshVersion?: string;
  /** What was skipped and why (bounded, for the snapshot's notes). */
  problems: string[];
  /** False when the file stopped being read at an object that never ends. */
  complete: boolean;
};

/** Objects whose body is a script (Tcl, iApp templates): their braces are counted, their text is kept as it is. */
const RAW_KINDS: readonly (readonly string[])[] = [
  ['ltm', 'rule'],
  ['gtm', 'rule'],
  ['pem', 'irule'],
  ['rule'],
  ['cli', 'script'],
  ['sys', 'icall', 'script'],
  ['sys', 'application', 'template'],
  ['sys', 'application', 'apl-script'],
];
const MAX_PROBLEMS = 20;
/** The comment a saved configuration file starts with: the software version that wrote it. */
const VERSION_LINE = '#TMSH-VERSION:';

const NEWLINE = 10;
const SPACE = 32;
const TAB = 9;
const CR = 13;
const QUOTE = 34;
const HASH = 35;
const BACKSLASH = 92;
const OPEN = 123;
const CLOSE = 125;

type Token = { kind: 'word'; text: string } | { kind: 'open' } | { kind: 'close' } | { kind: 'newline' } | { kind: 'eof' };

/** Too deep or too big: the object is skipped to its end and left out. */
class Oversized {
  readonly reason: string;
  /** Blocks open where reading stopped: the braces still to close to reach the object's end. */
  readonly open: number;
  constructor(reason: string, open: number) {
    this.reason = reason;
    this.open = open;
  }
}

/**
 * Reads a configuration file's text. `keep` chooses the objects to build by their header (`['ltm',
 * 'pool', '/Common/web']`); every other object is skipped by counting its braces, building nothing.
 * Lenient: unknown kinds, properties and comments are skipped; an object too deep or too big is left out
 * with a problem; an object that never ends (unbalanced braces or quotes) stops the reading of the file,
 * whose objects before it are kept.
 *
 * @example parseTmsh('ltm pool /Common/p {\n    members { /Common/10.0.0.1:80 { address 10.0.0.1 } }\n}\n', (h) => h[0] === 'ltm').objects[0].header
 * // ['ltm', 'pool', '/Common/p']
 */
export function parseTmsh(text: string, keep: (header: readonly string[]) => boolean, limits: TmshLimits = DEFAULT_TMSH_LIMITS): TmshParse {
  const result: TmshParse = { objects: [], problems: [], complete: true };
  let problems = 0;
  const problem = (message: string) => {
    if (problems++ < MAX_PROBLEMS) result.problems.push(message);
  };
  let pos = 0;
  let line = 1;
  let lineStart = true;

  /** The next token of tmsh text: `#` starts a comment only as the first thing on a line. */
  const next = (): Token => {
    for (;;) {
      if (pos >= text.length) return { kind: 'eof' };
      const c = text.charCodeAt(pos);
      if (c === SPACE || c === TAB || c === CR) {
        pos++;
        continue;
      }
      if (c === NEWLINE) {
        pos++;
        line++;
        lineStart = true;
        return { kind: 'newline' };
      }
      if (c === HASH && lineStart) {
        const from = pos;
        while (pos < text.length && text.charCodeAt(pos) !== NEWLINE) pos++;
        if (result.tmshVersion === undefined && text.startsWith(VERSION_LINE, from))
          result.tmshVersion = text.slice(from + VERSION_LINE.length, Math.min(pos, from + 64)).trim();
        continue;
      }
      lineStart = false;
      if (c === OPEN) {
        pos++;
        return { kind: 'open' };
      }
      if (c === CLOSE) {
        pos++;
        return { kind: 'close' };
      }
      return c === QUOTE ? quoted() : bare();
    }
  };
  const quoted = (): Token => {
    pos++;
    let out = '';
    let from = pos;
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c === QUOTE) {
        out += text.slice(from, pos);
        pos++;
        return { kind: 'word', text: out };
      }
      if (c === NEWLINE) line++;
      if (c === BACKSLASH && pos + 1 < text.length) {
        const escaped = text.charCodeAt(pos + 1);
        // \" and \\ stand for themselves; any other escape (\r, \n, \?) is kept as written, as tmsh keeps it.
        if (escaped === QUOTE || escaped === BACKSLASH) {
          out += text.slice(from, pos) + text[pos + 1];
          pos += 2;
          from = pos;
          continue;
        }
        if (escaped === NEWLINE) line++;
        pos += 2;
        continue;
      }
      pos++;
    }
    return { kind: 'eof' }; // an unterminated quote: the object never ends
  };
  const bare = (): Token => {
    const from = pos;
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c === SPACE || c === TAB || c === CR || c === NEWLINE || c === OPEN || c === CLOSE) break;
      pos += c === BACKSLASH && pos + 1 < text.length && text.charCodeAt(pos + 1) !== NEWLINE ? 2 : 1;
    }
    return { kind: 'word', text: text.slice(from, pos) };
  };

  /** Skips to the brace that closes a block already opened; false at the end of the text. */
  const skipBlock = (): boolean => {
    let depth = 1;
    for (;;) {
      const token = next();
      if (token.kind === 'eof') return false;
      if (token.kind === 'open') depth++;
      else if (token.kind === 'close' && --depth === 0) return true;
    }
  };

  /** Script text: braces counted (a backslash escapes the next character), quotes and `#` are Tcl's business. */
  const rawBlock = (): string | undefined => {
    const from = pos;
    let depth = 1;
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c === NEWLINE) line++;
      if (c === BACKSLASH) {
        if (text.charCodeAt(pos + 1) === NEWLINE) line++;
        pos += 2;
        continue;
      }
      pos++;
      if (c === OPEN) depth++;
      else if (c === CLOSE && --depth === 0) {
        lineStart = false;
        return text
          .slice(from, pos - 1)
          .replace(/^\n/, '')
          .replace(/\n$/, '');
      }
    }
    return undefined;
  };

  /** The entries of a block already opened, up to its closing brace; undefined at the end of the text. */
  const parseBlock = (depth: number, budget: { items: number }): TmshNode[] | undefined => {
    if (depth > limits.maxDepth) throw new Oversized(`is nested more than ${limits.maxDepth} levels deep`, depth);
    const nodes: TmshNode[] = [];
    let words: string[] = [];
    const spend = (open: number) => {
      if (--budget.items < 0) throw new Oversized(`has more than ${limits.maxObjectItems} words and entries`, open);
    };
    for (;;) {
      const token = next();
      if (token.kind === 'eof') return undefined;
      if (token.kind === 'word') {
        spend(depth);
        words.push(token.text);
      } else if (token.kind === 'newline') {
        if (words.length > 0) nodes.push({ words });
        words = [];
      } else if (token.kind === 'open') {
        spend(depth + 1);
        const block = parseBlock(depth + 1, budget);
        if (block === undefined) return undefined;
        nodes.push({ words, block });
        words = [];
      } else {
        if (words.length > 0) nodes.push({ words });
        return nodes;
      }
    }
  };

  let kept = 0;
  for (;;) {
    const token = next();
    if (token.kind === 'eof') break;
    if (token.kind === 'newline') continue;
    if (token.kind === 'close') {
      problem(`line ${line}: a closing brace outside any object was skipped`);
      continue;
    }
    const headerLine = line;
    const header: string[] = [];
    let opened = token.kind === 'open';
    if (token.kind === 'word') header.push(token.text);
    while (!opened) {
      const more = next();
      if (more.kind === 'word') header.push(more.text);
      else if (more.kind === 'open') opened = true;
      else if (more.kind === 'close') problem(`line ${line}: a closing brace outside any object was skipped`);
      else break; // a header alone on its line (newline or end of text): an object without a body
    }
    const wanted = header.length > 0 && keep(header) && kept < limits.maxObjects;
    if (header.length > 0 && keep(header) && kept === limits.maxObjects)
      problem(`more than ${limits.maxObjects} objects: ${header.slice(0, 3).join(' ')} and later ones were left out`);
    if (!opened) {
      if (wanted) {
        kept++;
        result.objects.push({ header, line: headerLine });
      }
      continue;
    }
    const raw = RAW_KINDS.some((kind) => kind.every((word, i) => header[i] === word));
    if (raw) {
      const body = rawBlock();
      if (body === undefined) return unended(result, header, headerLine, problem);
      if (wanted) {
        kept++;
        result.objects.push({ header, raw: body, line: headerLine });
      }
      continue;
    }
    if (!wanted) {
      if (!skipBlock()) return unended(result, header, headerLine, problem);
      continue;
    }
    try {
      const block = parseBlock(1, { items: limits.maxObjectItems });
      if (block === undefined) return unended(result, header, headerLine, problem);
      kept++;
      result.objects.push({ header, block, line: headerLine });
    } catch (error) {
      if (!(error instanceof Oversized)) throw error;
      // Reading stopped inside the object: count braces from there to its end, building nothing.
      if (!skipBlocks(error.open)) return unended(result, header, headerLine, problem);
      problem(`line ${headerLine}: ${describe(header)} ${error.reason}; it was left out`);
    }
  }
  return result;

  /** Skips to the end of `open` nested blocks already opened (skipBlock closes one, with whatever it holds). */
  function skipBlocks(open: number): boolean {
    for (let left = open; left > 0; left--) if (!skipBlock()) return false;
    return true;
  }
}

function unended(result: TmshParse, header: readonly string[], line: number, problem: (message: string) => void): TmshParse {
  problem(`line ${line}: ${describe(header)} does not end (unbalanced braces or quotes); the rest of the file was not read`);
  result.complete = false;
  return result;
}

/** An object's header as a message may quote it: its first words, control characters escaped, at most 120 characters. */
export function describe(header: readonly string[]): string {
  const text = header.slice(0, 4).join(' ');
  const shown = JSON.stringify(text.length > 120 ? `${text.slice(0, 117)}...` : text);
  return shown.slice(1, -1);
}
