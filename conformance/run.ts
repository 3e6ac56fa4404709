import { randomBytes } from 'node:crypto';
import type { InterfaceName } from '../src/lib/spec-catalog.ts';
import type { Observation } from './answer-check.ts';
import {
  createAuthenticator,
  credentialNames,
  credentialsFrom,
  credentialVariables,
  type Credential,
  type CredentialVariables,
} from './auth.ts';
import { buildCoverage } from './coverage.ts';
import { loadAuthData, loadOperationData, loadUnreachable, loadVariables, type Unreachable } from './data-files.ts';
import { destructiveReason, operationHeaders, urlOf, type EngineContext } from './engine-context.ts';
import { fuzzOperation } from './fuzz.ts';
import { applyHints, type HintContext } from './hints.ts';
import { createHttpClient, type HttpTransport } from './http.ts';
import { applyKnownFailures, checkedOnly, knownNoAnswer, type KnownFailure } from './known-failures.ts';
import { countOutcomes, type FuzzResult, type OperationResult, type RunResult, type ScenarioResult, type WritesPolicy } from './model.ts';
import { markNotServed, notServed } from './not-served.ts';
import { checkOperation } from './operation-check.ts';
import { loadScenarios, SCENARIOS_DIR, type LoadedScenario } from './scenario-file.ts';
import { runScenario } from './scenario-runner.ts';
import { loadSpecSet, type SpecSet } from './spec-set.ts';
import { printableTargets, targetsOf, withoutCredentials, type TargetMap } from './targets.ts';

export type ConformanceOptions = {
  /** Base URL per role or interface, `*` for the rest (see targets.ts). */
  targets: TargetMap;
  /** Only these interfaces (`--spec`); all when absent. */
  interfaces?: readonly InterfaceName[];
  /** Nothing destructive, no wrong passwords, no fuzzing unless `fuzzRuns` is given. */
  safe?: boolean;
  /**
   * The target keeps no state (a mock): no wrong credentials (it has no accounts), no scenarios unless
   * `scenarios` names some, no fuzzing unless `fuzzRuns` is given; operations are checked
   * concurrently. Valid, invalid and missing-credential requests are checked as usual.
   */
  stateless?: boolean;
  /** Fuzzing seed; random (and printed) when absent. */
  seed?: number;
  /** Fuzz runs per operation; 0 turns fuzzing off. Default 25, or 0 in safe mode. */
  fuzzRuns?: number;
  /** `--var name=value`: win over data/variables.yaml and over scenario variables. */
  variables?: Record<string, unknown>;
  /** Credentials by name (auth.yaml), over those read from the environment. */
  credentials?: Record<string, Credential | undefined>;
  env?: Record<string, string | undefined>;
  /** Scenario names to run (all when absent); `[]` runs none. */
  scenarios?: readonly string[];
  scenariosDir?: string;
  unreachable?: readonly Unreachable[];
  timeoutMs?: number;
  /** How requests are sent (default: undici; `createFetchClient` for targets that intercept fetch, e.g. MSW). */
  transport?: HttpTransport;
  /**
   * Ways the target is known to break its spec (see known-failures.ts): reported with why, not failed.
   * Entries about operations this run did not check are left out (checkedOnly). A probe an entry of check
   * `transport` names (the target never answers it) waits `noAnswerWaitMs`, not `timeoutMs`.
   */
  knownFailures?: readonly KnownFailure[];
  /** The wait for an answer the known failures say never comes (default 1000 ms, at most `timeoutMs`). */
  noAnswerWaitMs?: number;
  /**
   * Whether requests that write to the target are sent (default: they are). `{sent: false}` is a read-only
   * run: every operation that writes (engine-context.ts writesReason) and every scenario that calls one is
   * skipped. `why` is printed in the summary.
   */
  writes?: WritesPolicy;
  /**
   * The target says which roles it serves (its role map, a config file): an operation of a role with no
   * URL is then "not served by this target" (this text says where the list came from), not skipped.
   */
  servedRolesFrom?: string;
  /** Where the role URLs came from, in words: printed in the reports. */
  routing?: string;
  /** Shell variables that hold each credential (reproduce lines), over those found in `env`. */
  credentialVariables?: CredentialVariables;
  /** The target is a Prism mock (its role map says so, or `--target prism`): the hints name Prism's gaps. */
  prismMock?: boolean;
  /** Called as each check ends (progress on stderr in the CLI). */
  onProgress?: (line: string) => void;
};

export const DEFAULT_FUZZ_RUNS = 25;

/** How long a probe the known failures say is never answered waits (see ConformanceOptions.noAnswerWaitMs). */
export const NO_ANSWER_WAIT_MS = 1000;

/** Operations checked at a time in stateless mode (one at a time otherwise: checks may change state). */
const STATELESS_CONCURRENCY = 8;

/**
 * Checks every operation of the chosen specs on every targeted role, runs the scenarios, fuzzes the
 * implemented operations and builds the coverage matrix.
 *
 * @example
 * const result = await runConformance({ targets: { '*': 'http://127.0.0.1:8080' }, safe: true });
 * console.log(toTap(result));
 */
export async function runConformance(options: ConformanceOptions): Promise<RunResult> {
  const started = Date.now();
  const safe = options.safe ?? false;
  const stateless = options.stateless ?? false;
  const seed = options.seed ?? randomBytes(4).readUInt32BE() % 2 ** 31;
  const fuzzRuns = options.fuzzRuns ?? (safe || stateless ? 0 : DEFAULT_FUZZ_RUNS);
  const specs = loadSpecSet();
  const chosen = specs.specs.filter((s) => !options.interfaces || options.interfaces.includes(s.name));
  const authData = loadAuthData();
  const env = options.env ?? process.env;
  const credentials = credentialsFrom(authData, env, options.credentials);
  const readOnly = options.writes?.sent === false;
  const known = options.knownFailures ?? [];
  const timeoutMs = options.timeoutMs ?? 10_000;
  const noAnswerWait = Math.min(options.noAnswerWaitMs ?? NO_ANSWER_WAIT_MS, timeoutMs);
  const overrides = { ...options.variables };
  const credentialScope = Object.fromEntries(
    Object.entries(credentials)
      .filter(([, c]) => c)
      .map(([name, c]) => [name, { ...c }]),
  );
  const scope = {
    ...loadVariables(),
    ...derivedVariables(specs, options.targets),
    runId: randomBytes(6).toString('hex'),
    ...overrides,
    credentials: credentialScope,
  };
  const http = (options.transport ?? createHttpClient)({ timeoutMs });
  const observations: Observation[] = [];
  const progress = options.onProgress ?? (() => {});

  const ctx: EngineContext = {
    specs,
    http,
    scope,
    overrides,
    targets: options.targets,
    safe,
    stateless,
    readOnly,
    noAnswerDeadline: (operation, probe) => (knownNoAnswer(known, operation, probe) ? noAnswerWait : undefined),
    operationData: loadOperationData(),
    observe: (o) => observations.push(o),
    auth: createAuthenticator({
      specs,
      data: authData,
      credentials,
      variables: { ...credentialVariables(authData, env), ...options.credentialVariables },
      scope,
      urlOf: (target) => urlOf({ targets: options.targets }, target)?.url,
      send: (request) => http.send(request),
    }),
  };

  try {
    // Each check in report order; run one at a time, or several at once when the target keeps no state.
    const checks: (() => Promise<OperationResult>)[] = [];
    for (const spec of chosen) {
      for (const op of spec.operations) {
        const where = targetsOf(options.targets, spec.name, op.roles);
        if (where.length === 0) {
          checks.push(async () => {
            const result: OperationResult = {
              interface: spec.name,
              operationId: op.operationId,
              method: op.method.toUpperCase(),
              path: op.path,
              role: op.roles.join('/'),
              outcome: 'skipped',
              reason: `no target for role ${op.roles.join('/')}`,
              probes: [],
            };
            if (options.servedRolesFrom)
              notServed(result, op.roles.join('/'), `${options.servedRolesFrom} names no ${op.roles.join(' or ')} role`);
            return result;
          });
          continue;
        }
        for (const w of where) {
          checks.push(async () => {
            const result = await checkOperation(ctx, { spec, op }, w);
            progress(`${result.outcome.padEnd(15)} ${spec.name} ${op.operationId} @${w.role}`);
            return result;
          });
        }
      }
    }
    const operations = await inOrder(checks, stateless ? STATELESS_CONCURRENCY : 1);
    // One URL for every role: the roles that are not there answered 404 to everything (not-served.ts).
    const named = new Set(Object.keys(options.targets).filter((k) => k !== '*'));
    markNotServed(operations, { defaultUrl: options.targets['*'], namedRoles: named });
    const unmetKnownFailures = applyKnownFailures(operations, checkedOnly(known, operations));

    const scenarios: ScenarioResult[] = [];
    const wanted = options.scenarios ?? (stateless ? [] : undefined);
    const all: LoadedScenario[] = wanted && wanted.length === 0 ? [] : loadScenarios(options.scenariosDir ?? SCENARIOS_DIR);
    if (wanted) {
      const unknown = wanted.filter((n) => !all.some((s) => s.name === n));
      if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${all.map((s) => s.name).join(', ')}`);
    }
    const configured = new Set(
      Object.entries(credentials)
        .filter(([, c]) => c)
        .map(([n]) => n),
    );
    for (const scenario of all.filter((s) => !wanted || wanted.includes(s.name))) {
      const result = await runScenario(ctx, scenario, { interfaces: new Set(chosen.map((s) => s.name)), credentials: configured });
      scenarios.push(result);
      progress(`${result.outcome.padEnd(15)} scenario ${scenario.name}`);
    }

    const fuzz: FuzzResult[] = [];
    if (fuzzRuns > 0) {
      for (const result of operations.filter((r) => r.outcome === 'pass' || r.outcome === 'fail' || r.outcome === 'known-failure')) {
        const target = specs.find(result.operationId)!;
        if (safe && destructiveReason(ctx, target)) continue;
        const outcome = await fuzzOperation(ctx, target, { role: result.role, url: result.url! }, fuzzRuns, seed);
        fuzz.push(outcome);
        progress(`${outcome.outcome.padEnd(15)} fuzz ${result.interface} ${result.operationId} @${result.role}`);
      }
    }

    applyHints(operations, scenarios, { ...hintContext(ctx, authData, configured), ...(options.prismMock ? { prismMock: true } : {}) });

    // What operations the target does not serve answered (404s) covers nothing and breaks nothing.
    const unserved = new Set(
      [...Map.groupBy(operations, (o) => `${o.interface} ${o.operationId}`)]
        .filter(([, results]) => results.every((o) => o.notServed))
        .map(([key]) => key),
    );
    const seen = observations.filter((o) => !unserved.has(`${o.interface} ${o.operationId}`));
    const coverage = buildCoverage(specs, chosen, operations, seen, options.unreachable ?? loadUnreachable());
    const probeViolations = operations.filter((o) => !o.notServed).flatMap((o) => o.probes.flatMap((p) => p.violations));
    const totals = {
      operations: countOutcomes(operations),
      scenarios: countOutcomes(scenarios),
      fuzz: countOutcomes(fuzz),
      violations: 0,
      knownViolations: probeViolations.filter((v) => v.known).length,
    };
    totals.violations =
      probeViolations.filter((v) => !v.known).length +
      scenarios.flatMap((s) => s.steps).reduce((n, s) => n + s.violations.length, 0) +
      fuzz.filter((f) => f.failure).length +
      scenarios.filter((s) => s.outcome === 'fail' && s.steps.every((st) => st.violations.length === 0)).length;
    // Reports print these: no user and password a target URL may carry.
    const targets = printableTargets(options.targets);
    for (const o of operations) if (o.url !== undefined) o.url = withoutCredentials(o.url);
    return {
      targets,
      seed,
      safe,
      stateless,
      fuzzRuns,
      startedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      operations,
      scenarios,
      fuzz,
      coverage,
      totals,
      unmetKnownFailures,
      ...(options.writes ? { writes: options.writes } : {}),
      ...(options.routing ? { routing: options.routing } : {}),
    };
  } finally {
    await http.close();
  }
}

/**
 * Defaults that follow the targets, over data/variables.yaml's (a `--var` still wins): the registration
 * Host is `localhost:<port of the URL registration requests go to>` (the gateway's), as the reference
 * system derives its own when PORTOLAN_REGISTRATION_HOST is not set, so a gateway on another port
 * needs no `--var registrationHost`.
 */
export function derivedVariables(specs: SpecSet, targets: TargetMap): Record<string, unknown> {
  const register = specs.find('registerClient');
  const url = register ? urlOf({ targets }, register)?.url : undefined;
  if (url === undefined || !URL.canParse(url)) return {};
  const { port, protocol } = new URL(url);
  return { registrationHost: `localhost:${port || (protocol === 'https:' ? '443' : '80')}` };
}

/** What the hints (hints.ts) need: the registration Host sent, and the credentials each operation sends. */
function hintContext(ctx: EngineContext, authData: ReturnType<typeof loadAuthData>, configured: ReadonlySet<string>): HintContext {
  const template = ctx.operationData.registerClient?.headers?.host;
  const host = operationHeaders(ctx, 'registerClient').host;
  const variable = template?.match(/^\$\{(\w+)\}$/)?.[1];
  return {
    ...(host ? { registrationHost: { value: host, ...(variable ? { variable } : {}) } } : {}),
    credentialsOf: (_interface, operationId) => {
      const target = ctx.specs.find(operationId);
      return target ? credentialNames(target, authData) : [];
    },
    interfaceOf: (operationId) => ctx.specs.find(operationId)?.spec.name,
    credentials: authData.credentials,
    configured,
    loginNotes: ctx.auth.loginNotes(),
    schemesOf: (operationId) => {
      const target = ctx.specs.find(operationId);
      const document = target?.spec.document as { security?: unknown } | undefined;
      const requirements = (target?.op.operation.security ?? document?.security ?? []) as Record<string, unknown>[];
      return [...new Set(requirements.flatMap((r) => Object.keys(r)))];
    },
  };
}

/** Runs the tasks, at most `limit` at a time, and gives their results in the tasks' order. */
async function inOrder<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}
