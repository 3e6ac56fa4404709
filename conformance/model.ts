/** What a conformance run produces: plain data, so every report (TAP, JUnit, JSON, differential) reads the same thing. */

/** Which rule a response broke. The first four come from the spec's response declaration. */
export type Check =
  | 'status' // the status is not declared for the operation
  | 'content-type' // the media type is not declared for that status
  | 'header' // a required header is missing or a declared header has a wrong value
  | 'body' // the body does not validate against the declared schema
  | 'server-error' // a 5xx (other than 501) answered a request
  | 'rejects-invalid' // an invalid request, or one without (or with wrong) credentials, was accepted
  | 'expectation' // a scenario step's expectation did not hold
  | 'transport' // no HTTP answer at all (connection refused, timeout)
  | 'setup'; // the engine could not build the request (a scenario refers to something unknown)

/** One broken rule. `pointer` is a JSON pointer into the response body ('' for the whole answer). */
export type Violation = {
  interface: string;
  operationId: string;
  check: Check;
  pointer: string;
  message: string;
  /** Set when the run's known-failures list names this violation: why the target breaks the spec here. */
  known?: string;
  /** Set when the failure matches a known cause (hints.ts): which setting to change. */
  hint?: string;
};

/** `known-failure`: every violation is named by the run's known-failures list (reported with why, never a pass). */
export type Outcome = 'pass' | 'fail' | 'known-failure' | 'not-implemented' | 'skipped';

/** Where a probe went and what came back, without bodies or credentials (safe to print and store). */
export type ProbeResult = {
  /** Stable across runs and targets with the same seed: the key of the differential report. */
  id: string;
  kind: 'valid' | 'invalid' | 'auth';
  name: string;
  outcome: Outcome;
  status?: number;
  violations: Violation[];
  /** The body's shape (JSON pointers with types), for the differential report. */
  shape?: string[];
  reason?: string;
  /** Set when the probe broke a rule or answered 501: a shell command that sends the same request (curl; credentials as shell variables). */
  reproduce?: string;
};

/** An operation the target does not serve: the role that serves it, and how that was found. */
export type NotServed = { role: string; why: string };

export type OperationResult = {
  interface: string;
  operationId: string;
  method: string;
  path: string;
  role: string;
  url?: string;
  outcome: Outcome;
  reason?: string;
  /** A skipped operation whose skip matches a known cause (hints.ts): which setting to change. */
  hint?: string;
  /**
   * Set on a skipped operation the target does not serve (its role is elsewhere): never a failure, counted
   * as "not served by this target" (not-served.ts).
   */
  notServed?: NotServed;
  probes: ProbeResult[];
};

export type StepResult = {
  id: string;
  name: string;
  operationId?: string;
  status?: number;
  /** How many requests the step sent (a `repeat` step sends many). */
  requests: number;
  outcome: Outcome;
  violations: Violation[];
  shape?: string[];
  /** Set when the step failed on an answer: a shell command that sends the same request. */
  reproduce?: string;
};

export type ScenarioResult = {
  name: string;
  file: string;
  description: string;
  outcome: Outcome;
  reason?: string;
  steps: StepResult[];
};

export type FuzzResult = {
  interface: string;
  operationId: string;
  role: string;
  outcome: Outcome;
  runs: number;
  /** The seed of this operation's property (derived from the run's seed and the operation). */
  seed: number;
  reason?: string;
  /** `request` is the shrunk request in one line; `reproduce` the shell command that sends it. */
  failure?: { path: string; request: string; reproduce?: string; violations: Violation[] };
};

export type CoverageMark = 'exercised' | 'unreachable' | 'uncovered' | 'not-implemented' | 'skipped';

export type CoverageRow = {
  interface: string;
  /** An operationId, or `x-portolan-gateway-responses` for the responses any gateway request may get. */
  operationId: string;
  statuses: Record<string, CoverageMark>;
  /** Why a status is unreachable or skipped. */
  reasons: Record<string, string>;
};

/**
 * Outcomes of a list of results, one per result: for operations, one per operation and role it was
 * checked on (the summary counts operations instead: verdict.ts operationCounts). `notServed` are skipped
 * results the target does not serve; `skipped` counts the others.
 */
export type Totals = { pass: number; fail: number; knownFailure: number; notImplemented: number; skipped: number; notServed: number };

/** Whether the run sent requests that create or change something in the target, and why (the summary says it). */
export type WritesPolicy = {
  sent: boolean;
  /** Why, in words: `the reference system this run started (a temporary store)`, `--allow-writes`, ... */
  why: string;
};

export type RunResult = {
  targets: Record<string, string>;
  seed: number;
  safe: boolean;
  /** Stateless mode: the target keeps no state (a mock); see run.ts. */
  stateless: boolean;
  fuzzRuns: number;
  startedAt: string;
  durationMs: number;
  operations: OperationResult[];
  scenarios: ScenarioResult[];
  fuzz: FuzzResult[];
  coverage: CoverageRow[];
  /** `violations` counts those no known failure names; `knownViolations` the others. */
  totals: { operations: Totals; scenarios: Totals; fuzz: Totals; violations: number; knownViolations: number };
  /** Known failures given to the run that did not happen (each fails the run): `<entry why>: <operation>`. */
  unmetKnownFailures: string[];
  /** Whether requests that write were sent (absent: they were, as before this was reported). */
  writes?: WritesPolicy;
  /** Where the role URLs came from, in words (a role map, a config file), when not from the command line. */
  routing?: string;
};

export const emptyTotals = (): Totals => ({ pass: 0, fail: 0, knownFailure: 0, notImplemented: 0, skipped: 0, notServed: 0 });

export function countOutcomes(items: readonly { outcome: Outcome; notServed?: NotServed }[]): Totals {
  const totals = emptyTotals();
  for (const item of items) {
    if (item.notServed) totals.notServed++;
    else if (item.outcome === 'pass') totals.pass++;
    else if (item.outcome === 'fail') totals.fail++;
    else if (item.outcome === 'known-failure') totals.knownFailure++;
    else if (item.outcome === 'not-implemented') totals.notImplemented++;
    else totals.skipped++;
  }
  return totals;
}

/** One line naming the operation, the check and the JSON pointer (and, for a known cause, the setting to change). */
export function formatViolation(v: Violation): string {
  return `${v.interface} ${v.operationId}: ${v.check} at ${v.pointer === '' ? '(root)' : v.pointer}: ${v.message}${v.hint ? ` — hint: ${v.hint}` : ''}`;
}
