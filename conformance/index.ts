// The conformance engine's public surface (package.json "exports": "./conformance"): named exports only.
// Run the checks against a target (runConformance with a TargetMap, or a target started here), then
// judge and render the result (verdict, toTap, toJUnit, toJsonSummary, summaryLines). conformance/cli.ts
// is the command line over the same functions.
//
// @example
// import { runConformance, verdict, summaryLines } from 'portolan/conformance';
// const result = await runConformance({ targets: { '*': 'http://127.0.0.1:8080' }, safe: true });
// console.log(summaryLines(result).join('\n'), verdict(result).ok);

// Running the checks.
export { runConformance, DEFAULT_FUZZ_RUNS, type ConformanceOptions } from './run.ts';
export { parseTargets, type ParsedTargets, type TargetMap } from './targets.ts';
export { createFetchClient, createHttpClient, type HttpClient, type HttpRequest, type HttpResponse, type HttpTransport } from './http.ts';
export type { Credential } from './auth.ts';
export { loadKnownFailures, type KnownFailure } from './known-failures.ts';
export { loadScenarios, SCENARIOS_DIR, type LoadedScenario } from './scenario-file.ts';
// Targets started in this process: the reference system, the Prism mocks.
export { startReferenceTarget, type ReferenceTarget } from './reference-target.ts';
export { startPrismTarget, PRISM_KNOWN_FAILURES, type PrismTarget } from './prism-target.ts';
// Finding the roles from one URL (a role map), or from a config file.
export { fetchRoleMap, parseRoleMap, roleMapTargets, ROLE_MAP_PATH, type RoleMap, type RoleMapRole } from './role-map.ts';
export { loadTargetConfig, type TargetConfig, type TargetConfigFile } from './target-config.ts';
export { markNotServed } from './not-served.ts';

// The result and its reports.
export {
  formatViolation,
  type Check,
  type CoverageRow,
  type Outcome,
  type OperationResult,
  type RunResult,
  type ScenarioResult,
  type Totals,
  type Violation,
  type NotServed,
  type WritesPolicy,
} from './model.ts';
export { verdict, toJsonSummary, type Verdict, type VerdictOptions } from './report-json.ts';
export { headline, operationCounts, fuzzCounts, type OperationCounts } from './verdict.ts';
// Every failure's request as a shell command (credentials as shell variables).
export { curlCommand, type Secret } from './reproduce.ts';
export { toTap } from './report-tap.ts';
export { toJUnit } from './report-junit.ts';
export { summaryLines, coverageLines, asComments } from './report-text.ts';
export { compareRuns, differentialLines, unmatched, type Difference } from './differential.ts';
// Failures with a known cause (applied inside runConformance).
export { applyHints, CAUSES, type Cause, type Finding, type HintContext } from './hints.ts';

// Before a run: is every target URL there? One line per URL that is not.
export { findUnreachable, unreachableLine, type UnreachableTarget } from './reachability.ts';

// The command line over the same functions, and its exit statuses.
export { main, USAGE, EXIT_STATUS, UNREACHABLE, type CliIo } from './cli.ts';
