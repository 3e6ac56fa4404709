// The documentation holds together: every relative link in README.md, CHANGELOG.md, docs/ and the READMEs they
// point into names a file that exists (and, with `#anchor`, a heading of that file, slugged as GitHub does), and
// the pages a user reads use none of the project's internal vocabulary (issue numbers, internal file names,
// the code's own names for its parts).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = fileURLToPath(new URL('../', import.meta.url));

/** Every `.md` file under a folder of the repository, as repository-relative paths. */
function markdownUnder(folder: string): string[] {
  const dir = join(root, folder);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

/** The pages a user reads: checked for links and for internal vocabulary. */
const USER_PAGES = ['README.md', 'CHANGELOG.md', ...markdownUnder('docs'), 'mocks/README.md', 'conformance/README.md'];
/** Pages for contributors: checked for links only (they name the code's parts by the code's names). */
const CONTRIBUTOR_PAGES = ['src/ARCHITECTURE.md', 'src/gateway/README.md'];

/** The text without fenced code blocks (each replaced by blank lines, so line numbers stay). */
function withoutFences(text: string): string {
  let inside = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inside = !inside;
        return '';
      }
      return inside ? '' : line;
    })
    .join('\n');
}

/** The same text with every character but the newlines as a space, so line numbers stay. */
const blank = (text: string) => text.replace(/[^\n]/g, ' ');

/** The text without fenced code blocks and inline code spans (which may run over a line break). */
function prose(text: string): string {
  return withoutFences(text).replace(/`[^`]*`/g, blank);
}

/** A heading's anchor as GitHub makes it: the rendered text, lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file offers: its headings (repeats numbered -1, -2, ...) and explicit ids. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(text).split('\n')) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id[1]!);
  }
  return anchors;
}

type Link = { target: string; line: number };

/** The links of a Markdown text outside code: inline `[text](target)`, images, and reference definitions. */
function linksOf(text: string): Link[] {
  const links: Link[] = [];
  withoutFences(text)
    .split('\n')
    .forEach((raw, i) => {
      const line = raw.replace(/`[^`\n]*`/g, '');
      for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: m[1]!, line: i + 1 });
      const definition = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
      if (definition) links.push({ target: definition[1]!, line: i + 1 });
    });
  return links;
}

/** What is wrong with one link of `page` (a repository-relative path), or undefined when it resolves. */
function brokenLink(page: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // http:, https:, mailto: ...
  const [path = '', anchor] = target.split('#', 2);
  const file = path === '' ? join(root, page) : resolve(dirname(join(root, page)), decodeURIComponent(path));
  if (relative(root, file).startsWith('..')) return 'points outside the repository';
  if (!existsSync(file)) return `no file ${relative(root, file)}`;
  if (anchor === undefined) return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `an anchor into ${relative(root, file)}, which is not a Markdown page`;
  if (!anchorsOf(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor))) return `no heading #${anchor} in ${relative(root, file)}`;
  return undefined;
}

/** Internal vocabulary a user-facing page must not use, checked on the raw text (links included). */
const RAW_FORBIDDEN: Array<[RegExp, string]> = [
  [/(?<![\w&/#])#\d+\b/, 'an issue number'],
  [/\bissues? #?\d+/i, 'an issue number'],
  [/DESIGN\.md/, 'an internal design file'],
  [/(?<![\w/-])interfaces\.md\b/, 'an internal source file'],
  [/\.\.\/shared\b/, 'a path outside the project'],
];
/** Internal words, checked on the prose (code spans and blocks removed: option names like `--seed` are fine). */
const PROSE_FORBIDDEN: Array<[RegExp, string]> = [
  [/\bseed\b/i, '"seed" (the project\'s source description)'],
  [/\brole apps?\b/i, '"role app" (a code name)'],
  [/\bstages?\b/i, '"stage" (a code name)'],
];
/** Uses of "seed" that mean the fuzzing or generation seed (the words may be on two lines). */
const SEED_ALLOWED = /\b(?:its|same|fuzzing|that)\s+seed\b/gi;

/** The internal vocabulary one page uses: one finding per line, naming everything found there. */
function vocabularyOf(text: string): string[] {
  const rawLines = text.split('\n');
  const proseLines = prose(text).replace(SEED_ALLOWED, blank).split('\n');
  return rawLines.flatMap((line, i) => {
    const found = [
      ...RAW_FORBIDDEN.filter(([pattern]) => pattern.test(line)),
      ...PROSE_FORBIDDEN.filter(([pattern]) => pattern.test(proseLines[i] ?? '')),
    ].map(([, what]) => what);
    return found.length > 0 ? [`line ${i + 1}: ${[...new Set(found)].join(', ')}: ${line.trim()}`] : [];
  });
}

t.test('the pages exist: the README, the changelog, the license and a docs index', async (t) => {
  for (const file of ['README.md', 'CHANGELOG.md', 'LICENSE', 'docs/README.md']) t.ok(existsSync(join(root, file)), file);
  t.ok(markdownUnder('docs').length >= 10, `docs/ has its pages (${markdownUnder('docs').length})`);
});

t.test('every relative link resolves, anchors included', async (t) => {
  for (const page of [...USER_PAGES, ...CONTRIBUTOR_PAGES]) {
    const links = linksOf(readFileSync(join(root, page), 'utf8'));
    const broken = links.flatMap(({ target, line }) => {
      const problem = brokenLink(page, target);
      return problem ? [`${page}:${line}: (${target}) ${problem}`] : [];
    });
    t.same(broken, [], `${page}: ${links.length} links resolve`);
  }
});

t.test('every docs page is reachable from the docs index or the README', async (t) => {
  const linked = new Set<string>();
  for (const page of ['README.md', ...markdownUnder('docs')]) {
    for (const { target } of linksOf(readFileSync(join(root, page), 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const path = target.split('#')[0]!;
      if (path !== '') linked.add(relative(root, resolve(dirname(join(root, page)), path)));
    }
  }
  for (const page of markdownUnder('docs').filter((p) => p !== 'docs/README.md'))
    t.ok(linked.has(page), `${page} is linked from another page`);
});

t.test('user-facing pages use no internal vocabulary', async (t) => {
  for (const page of USER_PAGES) t.same(vocabularyOf(readFileSync(join(root, page), 'utf8')), [], page);
});

t.test('the checks themselves: slugs, links, vocabulary', async (t) => {
  t.equal(slug("The gateway's pool monitor"), 'the-gateways-pool-monitor');
  t.equal(slug('Archive format (`portolan-snapshot/1`)'), 'archive-format-portolan-snapshot1');
  t.equal(slug('[Mocks](x.md) and `portolan mock`'), 'mocks-and-portolan-mock');
  t.same([...anchorsOf('# A\n## Notes\n```\n# not a heading\n```\n## Notes\n')], ['a', 'notes', 'notes-1']);
  t.same(
    linksOf('[a](x.md#y) `[b](code.md)` ![c](img.png)\n```\n[d](fenced.md)\n```\n[e]: ref.md').map((l) => l.target),
    ['x.md#y', 'img.png', 'ref.md'],
  );
  t.equal(brokenLink('docs/README.md', '../README.md'), undefined, 'an existing file');
  t.equal(brokenLink('docs/README.md', 'https://example.com/x'), undefined, 'an external URL is not checked');
  t.match(brokenLink('docs/README.md', 'nowhere.md'), /no file docs\/nowhere\.md/);
  t.match(brokenLink('docs/README.md', '../README.md#no-such-heading'), /no heading #no-such-heading in README\.md/);
  t.match(brokenLink('README.md', '../../etc/passwd'), /outside the repository/);
  t.same(vocabularyOf('Run `--seed 3`; the same seed repeats it.'), []);
  t.same(vocabularyOf('the same\nseed, and `{counts,\nseed}`'), [], 'across a line break');
  t.equal(vocabularyOf('See issue 22 and #23.').length, 1, 'one finding per line');
  t.match(vocabularyOf('the seed says so')[0], /line 1: "seed"/);
  t.match(vocabularyOf('x\nthe role app runs stages')[0], /line 2: "role app"/);
  t.match(vocabularyOf('see ../shared/DESIGN.md')[0], /internal design file|outside the project/);
});
