// Diagnostic outputs for the format tests: a realistic one from the engine (the shipped rule set over
// the healthy fixture snapshot with problems of every importance), and a large made-up one.
import type { Diagnostic, DiagnosticOutput } from '../../../../generated/snapshots/types.gen.ts';
import { evaluateSnapshot, loadRuleSetFile, type DiagnosticSet } from '../engine/index.ts';
import { both, dbVariables, patched, replace } from '../engine/test-snapshots.ts';
import type { PdfSnapshot } from './pdf.ts';

const loaded = await loadRuleSetFile();
if (!loaded.ok) throw new Error(loaded.message);
const { ruleSet } = loaded;

/** The healthy snapshot with a full /var, an empty pool, a single-member pool, a core file and verbose access logs. */
const problems = both(
  replace('commands/df.txt', '62% /var', '99% /var'),
  replace('config/declarations.json', /"serverAddresses": \["10\.0\.3\.31", "10\.0\.3\.32"\]/, '"serverAddresses": []'),
  replace('config/declarations.json', /"serverAddresses": \["10\.0\.3\.21", "10\.0\.3\.22"\]/, '"serverAddresses": ["10.0.3.21"]'),
  dbVariables({ 'log.access.level': 'debug' }),
  { files: { 'cores/tmm.1021.core.gz': '' } },
);

/** The engine's answer for a snapshot with hits of every importance, and misses. */
export const realisticOutput = (set: DiagnosticSet = 'all'): DiagnosticOutput => evaluateSnapshot(ruleSet, patched(problems), set);

/** What the PDF says about that snapshot (its manifest). */
export const REALISTIC_SNAPSHOT: PdfSnapshot = {
  id: '1180057',
  hostname: 'device-1.example.net',
  chassisSerial: 'PTL-0001-4242',
  platform: 'portolan-reference',
  version: '17.1.0',
  generationDate: '2026-11-02T09:30:00Z',
};

const IMPORTANCES = ['low', 'medium', 'high', 'critical'] as const;

/** `hits` hits (long texts, several links) and `misses` misses: many pages of PDF. */
export function largeOutput(hits: number, misses: number): DiagnosticOutput {
  const diagnostic = Array.from({ length: hits + misses }, (_, i): Diagnostic => {
    const match = i < hits;
    return {
      name: `rule-${String(i).padStart(3, '0')}`,
      output: match ? Array.from({ length: 1 + (i % 15) }, (_, j) => `config/file-${i}.conf: line ${j + 1}: value ${j * 7}`) : [],
      run_data: { h_importance: IMPORTANCES[i % 4]!, match },
      results: {
        h_action: `Action ${i}: ${'change the setting and deploy again. '.repeat(1 + (i % 5))}`,
        h_name: `rule-${i}`,
        h_header: `Finding number ${i}`,
        h_summary: `Summary ${i}: ${'the device does something it should not. '.repeat(1 + (i % 7))}`,
        h_sols: [`https://support.example.com/kb/rule-${i}`, `https://support.example.com/kb/rule-${i}-details`],
        h_cve_ids: i % 3 === 0 ? [`CVE-2026-${10000 + i}`] : [],
      },
    };
  });
  return {
    diagnostics: { filter: 'all', hit_count: hits, miss_count: misses, diagnostic },
    system_information: { hostname: 'big.example.net', chassis_serial: 'PTL-BIG', platform: 'portolan-reference' },
    version: '2026.11.1',
  };
}
