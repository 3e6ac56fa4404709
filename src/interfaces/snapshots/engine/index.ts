// The snapshot processing engine of interface C: unpack a snapshot archive safely, read it, and run
// the rule set over it. Pure of HTTP; the snapshots module wires it to the upload and the job queue.
export { extractSnapshot, readManifest, type ExtractedSnapshot, type ExtractFailure } from './extract.ts';
export { DEFAULT_EXTRACT_LIMITS, extractLimits, inflatedBudgetLimits, type ExtractLimits } from './limits.ts';
export { DEVICE_ARCHIVE_FORMAT, MANIFEST_FORMAT, validateManifest, type Manifest, type ManifestCheck } from './manifest.ts';
export { DEFAULT_READ_LIMITS, readSnapshotFolder, snapshotContent, type ReadLimits, type SnapshotContent } from './snapshot-content.ts';
export { DEFAULT_RULES_PATH, loadRuleSetFile, parseRuleSet, type RuleSetLoad } from './rule-set.ts';
export type { Importance, Rule, RuleSet } from './rule-types.ts';
export { evaluateSnapshot, selectDiagnostics, type DiagnosticSet } from './evaluate.ts';
