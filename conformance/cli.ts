import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { INTERFACES, type InterfaceName } from '../src/lib/spec-catalog.ts';
import type { Credential } from './auth.ts';
import { compareRuns, differentialLines, unmatched, type Difference } from './differential.ts';
import type { RunResult } from './model.ts';
import { loadKnownFailures } from './known-failures.ts';
import { startPrismTarget } from './prism-target.ts';
import { findUnreachable, unreachableLine } from './reachability.ts';
import { startReferenceTarget } from './reference-target.ts';
import { toJsonSummary } from './report-json.ts';
import { toJUnit } from './report-junit.ts';
import { tapPoint, toTap } from './report-tap.ts';
import { asComments, coverageLines, summaryLines } from './report-text.ts';
import { DEFAULT_FUZZ_RUNS, runConformance, type ConformanceOptions } from './run.ts';
import { parseTargets, printableTargets, type TargetMap } from './targets.ts';
import { headline, verdict } from './verdict.ts';

export const USAGE = `Usage: npm run conformance -- --target <target> [options]

Checks a running implementation against the specs in specs/: every operation with valid requests
built from the examples and invalid ones built from the schemas, the scenarios in
conformance/scenarios/, and fuzzing. TAP on stdout, the summary and coverage matrix as TAP comments.

Targets (--target and --compare may be repeated):
  <url>                   every interface at one base URL (e.g. the gateway)
  <role>=<url>            one role: ${['gateway', 'mapping', 'device', 'central', 'diagnostics', 'login'].join(', ')}
  <interface>=<url>       one interface: ${INTERFACES.map((i) => i.name).join(', ')}
  reference               start the reference system in this process and check it
  prism                   start the Prism mocks (npm run mock) on free ports and check them; implies --stateless

Options:
  --spec <name>           only this interface (repeatable)
  --safe                  for real devices: nothing destructive (DELETE and the operations in
                          conformance/data/operations.yaml), no wrong passwords, no fuzzing unless --fuzz-runs
  --stateless             for mocks that keep no state: valid, invalid and credential-less requests only
                          (no wrong passwords, no scenarios unless --scenario, no fuzzing unless --fuzz-runs)
  --known-failures <file> where the target is known to break its specs, with why (YAML, see
                          conformance/data/prism-known-failures.yaml): reported as such, not failed; a
                          listed failure that does not happen fails the run
  --report <file>         write JUnit XML
  --json <file>           write the JSON summary
  --seed <n>              fuzzing seed (printed on every run; the same seed repeats the run)
  --fuzz-runs <n>         fuzz runs per operation (default ${DEFAULT_FUZZ_RUNS}, 0 in safe and stateless mode; 0 turns fuzzing off)
  --compare <target>      run the same checks against a second target and report where they differ
  --scenario <name>       only this scenario (repeatable); --no-scenarios runs none
  --var <name>=<value>    set a variable of conformance/data/variables.yaml (limits, windows, hosts)
  --require-implemented   operations and scenarios that answer 501 fail the run (--strict is the same)
  --require-coverage      a documented status nothing exercised nor explains fails the run
  --timeout <ms>          time limit of each request and of the first connection to each URL (default 10000)
  --quiet                 no progress lines on stderr

Credentials come from the environment (conformance/data/auth.yaml): CONFORMANCE_ADMIN_USER and
CONFORMANCE_ADMIN_PASSWORD (else PORTOLAN_ADMIN_USER / PORTOLAN_ADMIN_PASSWORD) for the device,
central, diagnostics and gateway administrative operations; CONFORMANCE_REGISTRATION_USER and
CONFORMANCE_REGISTRATION_PASSWORD for a user the registration endpoint accepts.

The summary's first line is the headline: PASS only when nothing failed, and always how many operations
are implemented and conformant, how many answer 501 (not implemented), how many fail, and how many
documented statuses nothing covered. A failure with a known cause (registration answered 404: the Host;
every authenticated operation of an interface refused: the credentials) names the setting to change.

Exit status: 0 when every check passed, 1 on any violation (not listed as known) or conflicting difference,
2 on a usage error, 3 when a target URL cannot be reached (nothing is run; one line per URL).
"Not implemented" (501) is listed and never counted as passing; it fails the run only with --require-implemented.
`;

export type CliIo = { stdout: (text: string) => void; stderr: (text: string) => void; env: Record<string, string | undefined> };

class UsageError extends Error {}

/**
 * The exit statuses of `main` (and of `portolan conformance`): `pass` nothing failed; `fail` a
 * violation, a known failure that did not happen, a conflicting difference, or a 501 / uncovered
 * status under --require-implemented / --require-coverage; `usage` a usage error; `unreachable` a
 * target URL cannot be reached (nothing was run).
 */
export const EXIT_STATUS = { pass: 0, fail: 1, usage: 2, unreachable: 3 } as const;

/** Exit status when a target URL cannot be reached (nothing was run): EXIT_STATUS.unreachable. */
export const UNREACHABLE = EXIT_STATUS.unreachable;

/** Runs the command line; resolves to the exit status. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let args;
  try {
    args = parseCli(argv);
  } catch (error) {
    io.stderr(`${(error as Error).message}\n\n${USAGE}`);
    return EXIT_STATUS.usage;
  }
  if (args.help) {
    io.stdout(USAGE);
    return EXIT_STATUS.pass;
  }
  const started: { stop(): Promise<void> }[] = [];
  try {
    const knownFailures = args.knownFailures ? loadKnownFailures(args.knownFailures) : undefined;
    const primary = await prepare(args.target, '--target', started, io);
    const other = args.compare.length > 0 ? await prepare(args.compare, '--compare', started, io) : undefined;
    // A dead target is one line per URL, before anything runs, not one connection error per request.
    // Both targets' URLs at once (each probes all its URLs at once): one timeout at most.
    const [deadPrimary, deadOther] = await Promise.all([
      findUnreachable(primary.targets, { timeoutMs: args.timeout }),
      other ? findUnreachable(other.targets, { timeoutMs: args.timeout }) : [],
    ]);
    const dead = [...deadPrimary.map((d) => unreachableLine(d, '--target')), ...deadOther.map((d) => unreachableLine(d, '--compare'))];
    if (dead.length > 0) {
      io.stderr(`${dead.join('\n')}\n`);
      return UNREACHABLE;
    }
    const base: Omit<ConformanceOptions, 'targets'> = {
      safe: args.safe,
      stateless: args.stateless || primary.stateless,
      ...(knownFailures ? { knownFailures } : {}),
      seed: args.seed ?? Math.floor(Math.random() * 2 ** 31),
      ...(args.fuzzRuns !== undefined ? { fuzzRuns: args.fuzzRuns } : {}),
      ...(args.interfaces ? { interfaces: args.interfaces } : {}),
      ...(args.scenarios ? { scenarios: args.scenarios } : {}),
      timeoutMs: args.timeout,
      env: io.env,
      ...(args.quiet ? {} : { onProgress: (line: string) => io.stderr(`${line}\n`) }),
    };
    const result = await runConformance({
      ...base,
      targets: primary.targets,
      credentials: primary.credentials,
      variables: { ...primary.variables, ...args.variables },
    });
    let compared: { result: RunResult; differences: Difference[] } | undefined;
    if (other) {
      if (!args.quiet) io.stderr('-- compare target --\n');
      const second = await runConformance({
        ...base,
        targets: other.targets,
        credentials: other.credentials,
        variables: { ...other.variables, ...args.variables },
      });
      compared = { result: second, differences: compareRuns(result, second) };
    }
    const differences = compared?.differences ?? [];
    const points = differences
      .filter((d) => d.conflict)
      .map((d) => tapPoint(false, `targets differ: ${d.key}`, { what: d.what, detail: d.detail }));
    io.stdout(toTap(result, points));
    const options = { requireImplemented: args.requireImplemented, requireCoverage: args.requireCoverage, differences };
    const lines = [...summaryLines(result, options), ...coverageLines(result)];
    if (compared) {
      lines.push(
        ...differentialLines(
          differences,
          { a: label(result.targets), b: label(compared.result.targets) },
          unmatched(result, compared.result),
        ),
      );
      lines.push(
        `compare target: ${headline(compared.result, { requireImplemented: args.requireImplemented, requireCoverage: args.requireCoverage })}`,
      );
    }
    const v = verdict(result, options);
    // The headline again, last: the first summary line is far above the coverage matrix.
    lines.push(`result: ${headline(result, options)}`);
    io.stdout(`${asComments(lines)}\n`);
    if (args.report)
      writeFileSync(
        args.report,
        toJUnit(result, differences, { requireImplemented: args.requireImplemented, requireCoverage: args.requireCoverage }),
      );
    if (args.json)
      writeFileSync(
        args.json,
        `${JSON.stringify(toJsonSummary(result, { ...options, ...(compared ? { compareTargets: compared.result.targets } : {}) }), null, 2)}\n`,
      );
    return v.ok ? EXIT_STATUS.pass : EXIT_STATUS.fail;
  } catch (error) {
    io.stderr(`conformance: ${(error as Error).message}\n`);
    return error instanceof UsageError ? EXIT_STATUS.usage : EXIT_STATUS.fail;
  } finally {
    await Promise.all(started.map((r) => r.stop()));
  }
}

async function prepare(
  values: readonly string[],
  option: '--target' | '--compare',
  started: { stop(): Promise<void> }[],
  io: CliIo,
): Promise<{ targets: TargetMap; credentials?: Record<string, Credential>; variables?: Record<string, unknown>; stateless?: boolean }> {
  let parsed;
  try {
    parsed = parseTargets(values, option);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.prism) {
    io.stderr('starting the Prism mocks...\n');
    const prism = await startPrismTarget();
    started.push(prism);
    return { targets: prism.targets, credentials: prism.credentials, stateless: true };
  }
  if (!parsed.reference) return { targets: parsed.map };
  io.stderr('starting the reference system...\n');
  const reference = await startReferenceTarget();
  started.push(reference);
  return reference;
}

const label = (targets: Record<string, string>) => {
  const shown = printableTargets(targets);
  return (
    shown['*'] ??
    Object.entries(shown)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')
  );
};

function parseCli(argv: readonly string[]) {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      target: { type: 'string', multiple: true },
      spec: { type: 'string', multiple: true },
      safe: { type: 'boolean' },
      stateless: { type: 'boolean' },
      'known-failures': { type: 'string' },
      report: { type: 'string' },
      json: { type: 'string' },
      seed: { type: 'string' },
      'fuzz-runs': { type: 'string' },
      compare: { type: 'string', multiple: true },
      scenario: { type: 'string', multiple: true },
      'no-scenarios': { type: 'boolean' },
      var: { type: 'string', multiple: true },
      strict: { type: 'boolean' },
      'require-implemented': { type: 'boolean' },
      'require-coverage': { type: 'boolean' },
      timeout: { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { help: true } as ReturnType<typeof build>;
  return build(values);

  function build(v: typeof values) {
    if (!v.target || v.target.length === 0) throw new UsageError('--target is required');
    const known = INTERFACES.map((i) => i.name as string);
    const unknown = (v.spec ?? []).filter((s) => !known.includes(s));
    if (unknown.length > 0) throw new UsageError(`--spec ${unknown.join(', ')}: unknown; known: ${known.join(', ')}`);
    const variables: Record<string, unknown> = {};
    for (const pair of v.var ?? []) {
      const eq = pair.indexOf('=');
      if (eq < 1) throw new UsageError(`--var ${pair}: expected name=value`);
      const value = pair.slice(eq + 1);
      variables[pair.slice(0, eq)] = /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
    }
    return {
      help: false,
      target: v.target,
      compare: v.compare ?? [],
      interfaces: v.spec ? (v.spec as InterfaceName[]) : undefined,
      safe: v.safe ?? false,
      stateless: v.stateless ?? false,
      knownFailures: v['known-failures'],
      report: v.report,
      json: v.json,
      seed: integer('--seed', v.seed),
      fuzzRuns: integer('--fuzz-runs', v['fuzz-runs']),
      scenarios: v['no-scenarios'] ? [] : v.scenario,
      variables,
      requireImplemented: (v['require-implemented'] || v.strict) ?? false,
      requireCoverage: v['require-coverage'] ?? false,
      timeout: integer('--timeout', v.timeout) ?? 10_000,
      quiet: v.quiet ?? false,
    };
  }
}

function integer(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} ${value}: expected a non-negative integer`);
  return Number(value);
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  });
}
