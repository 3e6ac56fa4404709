import type { Diagnostic, DiagnosticOutput } from '../../../../generated/snapshots/types.gen.ts';
import { evaluateCondition } from './conditions.ts';
import { factsOf } from './facts.ts';
import type { RuleSet } from './rule-types.ts';
import type { SnapshotContent } from './snapshot-content.ts';

/** Which diagnostics an answer lists (the `set` query): hits, misses or all. */
export type DiagnosticSet = DiagnosticOutput['diagnostics']['filter'];

/** At most this many output lines per diagnostic; a last line says how many more there were. */
export const MAX_OUTPUT_LINES = 50;

/**
 * Runs every rule of `ruleSet` over one snapshot and answers the diagnostics object of the spec
 * (`DiagnosticOutput`): one diagnostic per rule, in rule-file order, hits with the lines that say
 * where. Pure: the same rule set and content always give the same answer. `hit_count` and
 * `miss_count` count every rule, whatever `set` lists.
 *
 * @example
 * const output = evaluateSnapshot(ruleSet, content, 'hit');
 * output.diagnostics.diagnostic.map((d) => d.results.h_header);
 */
export function evaluateSnapshot(ruleSet: RuleSet, content: SnapshotContent, set: DiagnosticSet = 'all'): DiagnosticOutput {
  const context = { content, facts: factsOf(content) };
  const diagnostic = ruleSet.rules.map((rule): Diagnostic => {
    const { match, output } = evaluateCondition(rule.match, context);
    return {
      name: rule.name,
      output: match ? capLines(output) : [],
      run_data: { h_importance: rule.importance, match },
      results: {
        h_action: rule.action,
        h_name: rule.name,
        h_header: rule.header,
        h_summary: rule.summary,
        h_sols: [...rule.solutions],
        h_cve_ids: [...rule.cves],
      },
    };
  });
  const hits = diagnostic.filter((d) => d.run_data.match).length;
  const { hostname, chassisSerial, platform } = content.manifest;
  const all: DiagnosticOutput = {
    diagnostics: { filter: 'all', hit_count: hits, miss_count: diagnostic.length - hits, diagnostic },
    system_information: { hostname, chassis_serial: chassisSerial, platform },
    version: ruleSet.version,
  };
  return selectDiagnostics(all, set);
}

/** The same output listing only hits (`hit`), only misses (`miss`) or everything (`all`); the counts stay. */
export function selectDiagnostics(output: DiagnosticOutput, set: DiagnosticSet): DiagnosticOutput {
  const diagnostic = output.diagnostics.diagnostic.filter((d) => set === 'all' || d.run_data.match === (set === 'hit'));
  return { ...output, diagnostics: { ...output.diagnostics, filter: set, diagnostic } };
}

const capLines = (lines: readonly string[]) =>
  lines.length > MAX_OUTPUT_LINES ? [...lines.slice(0, MAX_OUTPUT_LINES), `... and ${lines.length - MAX_OUTPUT_LINES} more`] : [...lines];
