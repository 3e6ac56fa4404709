import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { RuleDecoder } from './rule-decoder.ts';
import { IMPORTANCES, type Importance, type Rule, type RuleSet } from './rule-types.ts';

export type RuleSetLoad = { ok: true; ruleSet: RuleSet } | { ok: false; message: string };

/** The rule set that ships with the engine. */
export const DEFAULT_RULES_PATH = fileURLToPath(new URL('./rules/rules.json', import.meta.url));

const RULE_KEYS = ['name', 'importance', 'header', 'summary', 'action', 'solutions', 'cves', 'match'];
const RULE_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const RULE_SET_VERSION = /^\d{4}\.\d{1,2}\.\d{1,4}$/;
const CVE = /^CVE-\d{4}-\d{4,7}$/;
const MAX_PROBLEMS = 20;

/**
 * Decodes and compiles a parsed rule file (README.md, "Rule language"), or lists what is wrong with it:
 * every problem with its place, so one fix-and-retry cycle is enough. A rule set with any invalid rule is
 * refused whole: a rule that silently never ran would look like a miss.
 *
 * @example
 * const loaded = parseRuleSet(JSON.parse(await readFile(DEFAULT_RULES_PATH, 'utf8')));
 * if (!loaded.ok) throw new Error(loaded.message);
 */
export function parseRuleSet(value: unknown): RuleSetLoad {
  const decoder = new RuleDecoder();
  const top = decoder.record(value, 'rule set', ['version', 'description', 'rules'], ['version', 'rules']);
  const rules: Rule[] = [];
  if (top) {
    if (typeof top.version !== 'string' || !RULE_SET_VERSION.test(top.version))
      decoder.problem('version', 'must be a date-based version like 2026.11.1');
    if (top.description !== undefined) decoder.text(top.description, 'description', 2000);
    if (!Array.isArray(top.rules) || top.rules.length === 0) decoder.problem('rules', 'must be a non-empty list');
    const names = new Set<string>();
    for (const [i, item] of (Array.isArray(top.rules) ? top.rules : []).entries()) {
      const label = `rules[${i}]${typeof item?.name === 'string' ? ` (${item.name.slice(0, 64)})` : ''}`;
      const rule = decodeRule(decoder, item, label);
      if (rule && names.has(rule.name)) decoder.problem(`${label}.name`, 'is used by an earlier rule');
      if (rule) names.add(rule.name);
      if (rule) rules.push(rule);
    }
  }
  const { problems } = decoder;
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_PROBLEMS).map((problem) => `- ${problem}`);
    if (problems.length > MAX_PROBLEMS) shown.push(`- ... and ${problems.length - MAX_PROBLEMS} more`);
    return { ok: false, message: `the rule set is invalid:\n${shown.join('\n')}` };
  }
  const reads = decoder.reads.map((glob) => glob.regex);
  const ruleSet: RuleSet = {
    version: (top as { version: string }).version,
    rules: Object.freeze(rules),
    reads: (path) => reads.some((regex) => regex.test(path)),
    source: structuredClone(value),
  };
  return { ok: true, ruleSet: Object.freeze(ruleSet) };
}

/** Reads, parses and decodes a rule file; a file that cannot be read or parsed is a failure with the path in its message. */
export async function loadRuleSetFile(path: string = DEFAULT_RULES_PATH): Promise<RuleSetLoad> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    return { ok: false, message: `the rule set ${path} cannot be read: ${(error as Error).message}` };
  }
  const loaded = parseRuleSet(value);
  return loaded.ok ? loaded : { ok: false, message: `${path}: ${loaded.message}` };
}

function decodeRule(decoder: RuleDecoder, value: unknown, at: string): Rule | undefined {
  const before = decoder.problems.length;
  const rule = decoder.record(
    value,
    at,
    RULE_KEYS,
    RULE_KEYS.filter((key) => key !== 'cves'),
  );
  if (!rule) return undefined;
  if (typeof rule.name !== 'string' || !RULE_NAME.test(rule.name) || rule.name.length > 64)
    decoder.problem(`${at}.name`, 'must be lower-case words joined by hyphens, at most 64 characters');
  if (!IMPORTANCES.includes(rule.importance as Importance)) decoder.problem(`${at}.importance`, `must be one of ${IMPORTANCES.join(', ')}`);
  decoder.text(rule.header, `${at}.header`, 200);
  decoder.text(rule.summary, `${at}.summary`, 2000);
  decoder.text(rule.action, `${at}.action`, 2000);
  const urls = Array.isArray(rule.solutions) && rule.solutions.length > 0 && rule.solutions.every(isHttpsUrl);
  if (!urls) decoder.problem(`${at}.solutions`, 'must be a non-empty list of https URLs');
  const cves = rule.cves ?? [];
  if (!Array.isArray(cves) || !cves.every((cve) => typeof cve === 'string' && CVE.test(cve)))
    decoder.problem(`${at}.cves`, 'must be a list of CVE ids like CVE-2024-12345');
  const match = decoder.condition(rule.match, `${at}.match`);
  if (decoder.problems.length > before || !match) return undefined;
  const { name, importance, header, summary, action, solutions } = rule as Omit<Rule, 'match' | 'cves'>;
  return Object.freeze({ name, importance, header, summary, action, solutions, cves: cves as string[], match });
}

function isHttpsUrl(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 500) return false;
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}
