// The public surface of @portolan/conformance (scripts/build.ts compiles it to the package's dist/index.js):
// the conformance engine of conformance/index.ts run against targets given by URL, and its reports. Left
// out, because they load the reference system or Prism: startReferenceTarget, startPrismTarget and the
// command line (main); those stay in the full `portolan` package (`portolan conformance`).
// scripts/package.test.ts checks that every other export of conformance/index.ts is here too.
//
// @example
// import { runConformance, summaryLines, verdict } from '@portolan/conformance';
// const result = await runConformance({ targets: { '*': 'http://127.0.0.1:8080' }, safe: true });
// console.log(summaryLines(result).join('\n'), verdict(result).ok);

// Running the checks.
export { runConformance, DEFAULT_FUZZ_RUNS, type ConformanceOptions } from '../../conformance/run.ts';
export { parseTargets, type ParsedTargets, type TargetMap } from '../../conformance/targets.ts';
export {
  createFetchClient,
  createHttpClient,
  type HttpClient,
  type HttpRequest,
  type HttpResponse,
  type HttpTransport,
} from '../../conformance/http.ts';
export type { Credential } from '../../conformance/auth.ts';
export { loadKnownFailures, type KnownFailure } from '../../conformance/known-failures.ts';
export { loadScenarios, SCENARIOS_DIR, type LoadedScenario } from '../../conformance/scenario-file.ts';
export { INTERFACES, type InterfaceName } from '../../src/lib/spec-catalog.ts';

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
} from '../../conformance/model.ts';
export { verdict, toJsonSummary, type Verdict, type VerdictOptions } from '../../conformance/report-json.ts';
export { headline, operationCounts, fuzzCounts, type OperationCounts } from '../../conformance/verdict.ts';
export { fetchRoleMap, parseRoleMap, roleMapTargets, ROLE_MAP_PATH, type RoleMap, type RoleMapRole } from '../../conformance/role-map.ts';
export { loadTargetConfig, type TargetConfig, type TargetConfigFile } from '../../conformance/target-config.ts';
export { markNotServed } from '../../conformance/not-served.ts';
export { curlCommand, type Secret } from '../../conformance/reproduce.ts';
export { toTap } from '../../conformance/report-tap.ts';
export { toJUnit } from '../../conformance/report-junit.ts';
export { summaryLines, coverageLines, asComments } from '../../conformance/report-text.ts';
export { compareRuns, differentialLines, unmatched, type Difference } from '../../conformance/differential.ts';
// Failures with a known cause (applied inside runConformance).
export { applyHints, CAUSES, type Cause, type Finding, type HintContext } from '../../conformance/hints.ts';

// Before a run: is every target URL there? One line per URL that is not.
export { findUnreachable, unreachableLine, type UnreachableTarget } from '../../conformance/reachability.ts';
