// docs/spec-diff.md and docs/ci/spec-diff.yml hold to the command: the page's table of checks is the
// catalogue, its examples are the command's real output, and the CI workflow parses as YAML and its
// spec-diff commands are accepted by the CLI (run here on a pull-request-like clone with origin/main).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { isObject } from '../lib/contract/json-pointer.ts';
import type { TapTest } from '../lib/tap-test.ts';
import { CHECK_IDS, CHECKS } from './checks.ts';
import { runSpecDiffCommand } from './cli.ts';
import { formatChecks } from './report.ts';

const PAGE = readFileSync(fileURLToPath(new URL('../../docs/spec-diff.md', import.meta.url)), 'utf8');
const WORKFLOW = readFileSync(fileURLToPath(new URL('../../docs/ci/spec-diff.yml', import.meta.url)), 'utf8');
const FIXTURES = fileURLToPath(new URL('./fixtures', import.meta.url));

/** The text between `<!-- name -->` and `<!-- /name -->` in the page. */
function section(name: string): string {
  const match = new RegExp(`<!-- ${name} -->\\n([\\s\\S]*?)\\n<!-- /${name} -->`).exec(PAGE);
  if (!match) throw new Error(`docs/spec-diff.md has no <!-- ${name} --> section`);
  return match[1]!;
}

/** The body of the fenced block of `language` that follows `marker` in the page. */
function blockAfter(marker: string, language: string): string {
  const from = PAGE.indexOf(marker);
  if (from < 0) throw new Error(`docs/spec-diff.md does not contain ${marker}`);
  const match = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\\n\`\`\``).exec(PAGE.slice(from));
  if (!match) throw new Error(`docs/spec-diff.md has no ${language} block after ${marker}`);
  return match[1]!;
}

async function run(argv: readonly string[], cwd: string) {
  let out = '';
  let err = '';
  const code = await runSpecDiffCommand(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s), env: {}, cwd });
  return { code, out, err };
}

const chartsSpec = (version: string, summary: string, required: string, extra: string) => `openapi: 3.1.0
info: {title: Charts, version: ${version}}
paths:
  /api/charts:
    post:
      operationId: createChart
      summary: ${summary}
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, required: [${required}], properties: {name: {type: string}, date: {type: string}${extra}}}
      responses:
        '201': {description: created}
`;

/**
 * A clone as a pull-request check sees it: `origin/main` with specs/mapping.yaml 1.0.0, and HEAD on a branch
 * where "name" became required and "notes" was added (1.1.0); a .spec-diff.yaml turns one check off.
 */
function pullRequestClone(t: TapTest) {
  const dir = t.testdir({});
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  mkdirSync(join(dir, 'specs'));
  writeFileSync(join(dir, 'specs/mapping.yaml'), chartsSpec('1.0.0', 'Create a chart', 'date', ''));
  writeFileSync(join(dir, '.spec-diff.yaml'), 'severity:\n  operation-description-changed: off\n');
  git('add', '.');
  git('commit', '-q', '-m', 'release 1.0.0');
  git('update-ref', 'refs/remotes/origin/main', 'HEAD');
  git('checkout', '-q', '-b', 'feature');
  writeFileSync(join(dir, 'specs/mapping.yaml'), chartsSpec('1.1.0', 'Create a named chart', 'date, name', ', notes: {type: string}'));
  git('commit', '-q', '-am', 'name required');
  return { dir, git };
}

t.test('the page lists every check with its default severity: the table is --list-checks --format markdown', async (t) => {
  t.equal(section('checks'), formatChecks('markdown', { severity: new Map() }));
  for (const id of CHECK_IDS) t.match(section('checks'), `| \`${id}\` | ${CHECKS[id].severity} |`);
});

t.test("the page's text example is the command's output on the fixture specs", async (t) => {
  const { out } = await run(['charts-v1.yaml', 'charts-v2.yaml'], FIXTURES);
  t.equal(`${section('example:text')}\n`, `\`\`\`text\n${out}\`\`\`\n`);
  const { err } = await run(['charts-v1.yaml', 'charts-v2.yaml'], FIXTURES);
  t.equal(`${blockAfter('When a spec fails the rule', 'text')}\n`, err);
});

t.test("the page's markdown and JSON examples are the command's output on a pull request", async (t) => {
  const { dir } = pullRequestClone(t);
  const markdown = await run(['origin/main', 'HEAD', '--format', 'markdown'], dir);
  t.equal(`${blockAfter('`--format markdown` writes', 'markdown')}\n`, markdown.out);
  const json = await run(['origin/main', 'HEAD', '--format', 'json'], dir);
  const shown = JSON.parse(blockAfter('`--format json` writes', 'json'));
  const real = JSON.parse(json.out);
  real.before.commit = real.after.commit = '<40 hex digits>';
  t.same(shown, real);
});

t.test("the page's config errors are the command's", async (t) => {
  const dir = t.testdir({});
  for (const line of blockAfter('A mistake is one line', 'text').split('\n')) {
    const key = /severity\.([a-z-]+): /.exec(line)![1]!;
    const value = /"fatal"/.test(line) ? 'fatal' : 'info';
    writeFileSync(join(dir, '.spec-diff.yaml'), `severity:\n  ${key}: ${value}\n`);
    t.equal((await run(['a.yaml', 'b.yaml'], dir)).err, `${line}\n`);
  }
});

t.test('the CI workflow parses, runs on pull requests with the history, and its commands are accepted', async (t) => {
  const workflow = parse(WORKFLOW) as {
    on: { pull_request?: unknown };
    jobs: Record<string, { env?: Record<string, string>; steps: { uses?: string; with?: Record<string, unknown>; run?: string }[] }>;
  };
  t.ok(isObject(workflow.on) && 'pull_request' in workflow.on, 'runs on pull requests');
  const [job] = Object.values(workflow.jobs);
  const checkout = job!.steps.find((s) => s.uses?.startsWith('actions/checkout@'));
  t.equal(checkout?.with?.['fetch-depth'], 0, 'checks out the history (origin/<base> must be there)');
  const env = { ...job!.env };
  t.equal(env.BASE, '${{ github.base_ref }}');
  // The commands, as the shell would split them, with BASE the pull request's base branch.
  const commands = job!.steps
    .flatMap((s) => (s.run ?? '').split('\n'))
    .filter((line) => line.includes('portolan spec-diff'))
    .map((line) =>
      line
        .trim()
        .split(/\s+(?:>>?|\|\|?|&&|;)\s+/)[0]!
        .split(/\s+/)
        .map((word) => word.replace(/^"(.*)"$/, '$1').replaceAll('$BASE', 'main')),
    );
  t.same(
    commands.map((words) => words.slice(0, 4)),
    [
      ['npx', 'portolan', 'spec-diff', 'origin/main'],
      ['npx', 'portolan', 'spec-diff', 'origin/main'],
    ],
  );
  const { dir, git } = pullRequestClone(t);
  const [report, gate] = commands.map((words) => words.slice(3));
  const markdown = await run(report!, dir);
  t.equal(markdown.code, 1, 'the summary step runs (its breaking change is in the output)');
  t.match(markdown.out, /^## API changes: `origin\/main` → `HEAD`\n/);
  t.equal((await run(gate!, dir)).code, 1, 'the gate fails on a breaking change without a major bump');
  writeFileSync(join(dir, 'specs/mapping.yaml'), chartsSpec('2.0.0', 'Create a named chart', 'date, name', ', notes: {type: string}'));
  git('commit', '-q', '-am', 'major bump');
  const passed = await run(gate!, dir);
  t.equal(passed.code, 0, 'and passes once info.version has a new major');
  t.equal(passed.err, '');
});
