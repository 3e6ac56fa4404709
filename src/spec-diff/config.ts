// The spec-diff config file: per-check severity overrides, read from `--config <file>` or, when none is
// named, from `.spec-diff.yaml` in the current directory (no file: every check at its default).
//   severity:
//     response-constraint-widened: info    # breaking | warning | info | off (not reported at all)
// A mistake in it is one line naming the file and the key; it never falls back to defaults silently.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { isObject } from '../lib/contract/json-pointer.ts';
import type { Change } from './change.ts';
import { CHECK_IDS, type CheckId, isCheckId, SEVERITIES, type Severity } from './checks.ts';

/** The file looked for in the current directory when `--config` is not given. */
export const DEFAULT_CONFIG_FILE = '.spec-diff.yaml';

/** What a check is set to: a severity, or `off` (its changes are not reported). */
export type Setting = Severity | 'off';

/** The overrides of one config file, and the file's name as the user gave it (undefined: no file). */
export type SpecDiffConfig = { file?: string; severity: ReadonlyMap<CheckId, Setting> };

const SETTINGS: readonly string[] = [...SEVERITIES, 'off'];

/** The check id nearest to a misspelt one (fewest edits, at most a third of its length), if any. */
function nearest(id: string): CheckId | undefined {
  const distance = (a: string, b: string) => {
    let row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row = next;
    }
    return row[b.length]!;
  };
  const [best] = CHECK_IDS.map((c) => [c, distance(id, c)] as const).sort((x, y) => x[1] - y[1]);
  return best && best[1] <= Math.ceil(id.length / 3) ? best[0] : undefined;
}

/**
 * The overrides in a config text; throws one line `<file>: <key>: <what is wrong>` when it is invalid.
 * @example parseConfig('severity:\n  operation-added: off\n', '.spec-diff.yaml').severity.get('operation-added') // 'off'
 */
export function parseConfig(text: string, file: string): SpecDiffConfig {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    throw new Error(`${file}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const severity = new Map<CheckId, Setting>();
  if (doc === null || doc === undefined) return { file, severity };
  if (!isObject(doc)) throw new Error(`${file}: expected a mapping with the key 'severity' (check id: breaking|warning|info|off)`);
  for (const key of Object.keys(doc)) {
    if (key !== 'severity') throw new Error(`${file}: ${key}: unknown key (the only key is 'severity')`);
  }
  const entries = doc.severity;
  if (entries === null || entries === undefined) return { file, severity };
  if (!isObject(entries)) throw new Error(`${file}: severity: expected a mapping of check id to breaking, warning, info or off`);
  for (const [id, value] of Object.entries(entries)) {
    if (!isCheckId(id)) {
      const guess = nearest(id);
      throw new Error(
        `${file}: severity.${id}: unknown check id (${guess ? `did you mean ${guess}? ` : ''}'portolan spec-diff --list-checks' lists them)`,
      );
    }
    if (typeof value !== 'string' || !SETTINGS.includes(value))
      throw new Error(`${file}: severity.${id}: ${JSON.stringify(value) ?? 'nothing'} is not one of ${SETTINGS.join(', ')}`);
    severity.set(id, value as Setting);
  }
  return { file, severity };
}

/**
 * The config in effect: `explicit` (from --config; it must exist), else `.spec-diff.yaml` in `cwd` when
 * there is one, else none. Throws one line naming the file when it cannot be read or is invalid.
 * @example await loadConfig(process.cwd()) // { severity: Map(0) } when there is no .spec-diff.yaml
 */
export async function loadConfig(cwd: string, explicit?: string): Promise<SpecDiffConfig> {
  const file = explicit ?? DEFAULT_CONFIG_FILE;
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (explicit === undefined && code === 'ENOENT') return { severity: new Map() };
    throw new Error(`${file}: cannot read the config file (${code === 'ENOENT' ? 'no such file' : (code ?? 'read failed')})`);
  }
  return parseConfig(text, file);
}

/**
 * Each change at the severity its check is set to; the changes of checks set to `off` left out.
 * @example applyConfig(changes, { severity: new Map([['operation-added', 'off']]) })
 */
export function applyConfig(changes: readonly Change[], config: SpecDiffConfig): Change[] {
  const out: Change[] = [];
  for (const change of changes) {
    const setting = config.severity.get(change.id);
    if (setting === 'off') continue;
    out.push(setting === undefined || setting === change.severity ? change : { ...change, severity: setting });
  }
  return out;
}
