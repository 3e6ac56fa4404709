// The three outputs of spec-diff: text for a terminal, markdown for a pull-request comment, JSON for
// scripts (its shape is stable: `schemaVersion` changes when a field changes meaning or goes). Changes are
// grouped by operation (`POST /api/charts`), those outside operations under "spec-wide", and each shows
// its severity and its check id.
import { type Change, type OperationRef, operationName } from './change.ts';
import { CHECK_IDS, CHECKS, type Severity } from './checks.ts';
import type { SpecDiffConfig } from './config.ts';
import type { SpecVerdict } from './verdict.ts';

/** One side of a comparison: a commit (and the ref the user named), the working tree, or a file. */
export type Side = { kind: 'commit'; ref: string; commit: string } | { kind: 'working-tree' } | { kind: 'file'; path: string };

/** Everything one run compared. */
export type SpecDiffReport = {
  before: Side;
  after: Side;
  /** The config file applied, if any. */
  config?: string;
  verdicts: SpecVerdict[];
  /** Specs new since `before` (names). */
  added: string[];
};

/** The version of the JSON output's shape. */
export const JSON_SCHEMA_VERSION = 1;

const sideLabel = (side: Side) =>
  side.kind === 'commit'
    ? side.commit.startsWith(side.ref)
      ? side.ref.slice(0, 12)
      : `${side.ref} (${side.commit.slice(0, 12)})`
    : side.kind === 'file'
      ? side.path
      : 'the working tree';
const sideName = (side: Side) => (side.kind === 'commit' ? side.ref : side.kind === 'file' ? side.path : 'the working tree');

type Group = { operation?: OperationRef; changes: Change[] };

const RANK: Record<Severity, number> = { breaking: 0, warning: 1, info: 2 };

/**
 * Changes by operation, in the order first met, breaking first within each; the changes outside operations last.
 * @example groupByOperation(verdict.changes).map((g) => g.operation ? operationName(g.operation) : 'spec-wide')
 */
export function groupByOperation(changes: readonly Change[]): Group[] {
  const groups = new Map<string, Group>();
  const outside: Change[] = [];
  for (const change of changes) {
    if (!change.operation) {
      outside.push(change);
      continue;
    }
    const key = operationName(change.operation);
    const group = groups.get(key) ?? { operation: change.operation, changes: [] };
    group.changes.push(change);
    groups.set(key, group);
  }
  const bySeverity = (g: Group) => ({ ...g, changes: g.changes.toSorted((a, b) => RANK[a.severity] - RANK[b.severity]) });
  return [...groups.values(), ...(outside.length > 0 ? [{ changes: outside }] : [])].map(bySeverity);
}

const count = (changes: readonly Change[], severity: Severity) => changes.filter((c) => c.severity === severity).length;
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const tally = (changes: readonly Change[]) =>
  `${count(changes, 'breaking')} breaking, ${plural(count(changes, 'warning'), 'warning', 'warnings')}, ${count(changes, 'info')} info`;
const versions = (v: SpecVerdict, arrow: string) =>
  v.version.before === v.version.after ? v.version.before : `${v.version.before} ${arrow} ${v.version.after}`;
const groupTitle = (g: Group) =>
  g.operation ? `${operationName(g.operation)}${g.operation.operationId ? ` (${g.operation.operationId})` : ''}` : 'spec-wide';

/**
 * The text output: a line saying what was compared, then per spec a headline and its changes by operation.
 * @example formatText(report).join('\n')
 */
export function formatText(report: SpecDiffReport): string[] {
  const lines = [
    `Compared ${sideLabel(report.before)} with ${sideLabel(report.after)}${report.config ? `; severities from ${report.config}` : ''}`,
  ];
  for (const name of report.added) lines.push(`specs/${name}.yaml: new since ${sideName(report.before)}, nothing to compare`);
  for (const v of report.verdicts) {
    if (v.changes.length === 0) {
      lines.push(`${v.file} (${versions(v, '->')}): no changes`);
      continue;
    }
    lines.push(`${v.file} (${versions(v, '->')}): ${tally(v.changes)}`);
    for (const group of groupByOperation(v.changes)) {
      lines.push(`  ${groupTitle(group)}`);
      for (const c of group.changes) lines.push(`    ${c.severity.padEnd(8)}  ${c.message}  [${c.id}]`);
    }
  }
  return lines;
}

/** Text safe inside a markdown table cell (or paragraph): markdown's punctuation backslash-escaped, no newline. */
const md = (text: string) => text.replace(/[\\`*_[\]<>|~#]/g, (c) => `\\${c}`).replace(/\n/g, ' ');
const code = (text: string) => (text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``);

/**
 * The markdown output, for a pull-request comment: a verdict first, then per changed spec one table per
 * operation; unchanged specs named in one line.
 * @example formatMarkdown(report).join('\n')
 */
export function formatMarkdown(report: SpecDiffReport): string[] {
  const lines = [`## API changes: ${code(sideName(report.before))} → ${code(sideName(report.after))}`, ''];
  const failed = report.verdicts.filter((v) => v.requiredVersion);
  const changed = report.verdicts.filter((v) => v.changes.length > 0);
  if (failed.length > 0) {
    lines.push(
      `**Breaking changes without a major version bump:** ${failed.map((v) => `${md(v.file)} (bump info.version to ${md(v.requiredVersion!)})`).join(', ')}.`,
    );
  } else if (changed.length > 0) {
    lines.push('No breaking change without a major version bump.');
  } else {
    lines.push(report.added.length > 0 ? 'No changes in the specs compared.' : 'No changes in the specs.');
  }
  if (report.config) lines.push('', `Severities from ${code(report.config)}.`);
  for (const v of changed) {
    lines.push('', `### ${md(v.file)} (${md(versions(v, '→'))}): ${tally(v.changes)}`);
    for (const group of groupByOperation(v.changes)) {
      const title = group.operation
        ? `**${code(operationName(group.operation))}**${group.operation.operationId ? ` (${code(group.operation.operationId)})` : ''}`
        : '**Spec-wide**';
      lines.push('', title, '', '| Severity | Change | Check |', '| --- | --- | --- |');
      for (const c of group.changes)
        lines.push(`| ${c.severity === 'breaking' ? '**breaking**' : c.severity} | ${md(c.message)} | ${code(c.id)} |`);
    }
  }
  const others = [
    ...(report.added.length > 0 ? [`New: ${report.added.map((n) => md(`specs/${n}.yaml`)).join(', ')}.`] : []),
    ...(changed.length < report.verdicts.length && changed.length > 0
      ? [
          `Unchanged: ${report.verdicts
            .filter((v) => v.changes.length === 0)
            .map((v) => md(v.file))
            .join(', ')}.`,
        ]
      : []),
  ];
  if (others.length > 0) lines.push('', others.join(' '));
  return lines;
}

/**
 * The JSON output (one document): what was compared, and per spec its versions, counts, the version to
 * bump to (null when none is needed) and every change with its id, severity, operation and pointer.
 * @example JSON.parse(formatJson(report)).specs[0].changes[0].id
 */
export function formatJson(report: SpecDiffReport): string {
  const side = (s: Side) =>
    s.kind === 'commit'
      ? { kind: 'commit', ref: s.ref, commit: s.commit }
      : s.kind === 'file'
        ? { kind: 'file', path: s.path }
        : { kind: 'working-tree' };
  return JSON.stringify(
    {
      schemaVersion: JSON_SCHEMA_VERSION,
      before: side(report.before),
      after: side(report.after),
      config: report.config ?? null,
      ok: report.verdicts.every((v) => !v.requiredVersion),
      specs: report.verdicts.map((v) => ({
        spec: v.spec ?? null,
        file: v.file,
        version: v.version,
        counts: { breaking: count(v.changes, 'breaking'), warning: count(v.changes, 'warning'), info: count(v.changes, 'info') },
        requiredVersion: v.requiredVersion ?? null,
        changes: groupByOperation(v.changes)
          .flatMap((g) => g.changes)
          .map((c) => ({
            id: c.id,
            severity: c.severity,
            method: c.operation?.method ?? null,
            path: c.operation?.path ?? null,
            operationId: c.operation?.operationId ?? null,
            message: c.message,
            pointer: c.pointer,
          })),
      })),
      added: report.added,
    },
    null,
    2,
  );
}

/**
 * The list of checks (`--list-checks`) with the severities in effect: text columns, a markdown table (the
 * one docs/spec-diff.md shows), or JSON.
 * @example formatChecks('markdown', { severity: new Map() })
 */
export function formatChecks(format: 'text' | 'markdown' | 'json', config: SpecDiffConfig): string {
  const rows = CHECK_IDS.map((id) => ({
    id,
    severity: config.severity.get(id) ?? CHECKS[id].severity,
    default: CHECKS[id].severity as Severity,
    description: CHECKS[id].description as string,
  }));
  if (format === 'json') return JSON.stringify(rows, null, 2);
  if (format === 'markdown')
    return [
      '| Check id | Severity | What it finds |',
      '| --- | --- | --- |',
      ...rows.map((r) => `| ${code(r.id)} | ${r.severity} | ${md(r.description)} |`),
    ].join('\n');
  const width = Math.max(...rows.map((r) => r.id.length));
  return rows
    .map(
      (r) =>
        `${r.id.padEnd(width)}  ${r.severity.padEnd(8)}  ${r.description}${r.severity !== r.default ? ` (default: ${r.default})` : ''}`,
    )
    .join('\n');
}
