// `portolan conformance`: checks a target against the specs and prints TAP, then the summary. A target is
// one URL of any role of a running Portolan system (its role map names the others), a config file naming
// each role's URL, explicit role=url pairs, or a system started here (the reference system, the Prism mocks).
import { writeFileSync } from 'node:fs';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { portolanCommand, runCommandLine, usageError } from '../src/cli/usage.ts';
import { ROLE_NAMES } from '../src/lib/roles.ts';
import { INTERFACES, type InterfaceName } from '../src/lib/spec-catalog.ts';
import type { Credential, CredentialVariables } from './auth.ts';
import { compareRuns, differentialLines, unmatched, type Difference } from './differential.ts';
import { loadKnownFailures, type KnownFailure } from './known-failures.ts';
import type { RunResult, WritesPolicy } from './model.ts';
import { PRISM_KNOWN_FAILURES, prismCredentials, startPrismTarget } from './prism-target.ts';
import { findUnreachable, unreachableLine } from './reachability.ts';
import { startReferenceTarget } from './reference-target.ts';
import { toJsonSummary } from './report-json.ts';
import { toJUnit } from './report-junit.ts';
import { tapPoint, toTap } from './report-tap.ts';
import { asComments, coverageLines, summaryLines } from './report-text.ts';
import { describeRoleMap, fetchRoleMap, ROLE_MAP_PATH, roleMapTargets } from './role-map.ts';
import { DEFAULT_FUZZ_RUNS, runConformance, type ConformanceOptions } from './run.ts';
import { configCredentials, loadTargetConfig } from './target-config.ts';
import { parseTargets, printableTargets, withoutCredentials, type TargetMap } from './targets.ts';
import { headline, verdict } from './verdict.ts';

const NAME = 'conformance';

export type CliIo = { stdout: (text: string) => void; stderr: (text: string) => void; env: Record<string, string | undefined> };

/**
 * The exit statuses of `main` (and of `portolan conformance`): `pass` nothing failed; `fail` a
 * violation, a known failure that did not happen, a conflicting difference, or a 501 / uncovered
 * status under --require-implemented / --require-coverage; `usage` a usage error; `unreachable` a
 * target URL cannot be reached (nothing was run).
 */
export const EXIT_STATUS = { pass: 0, fail: 1, usage: 2, unreachable: 3 } as const;

/** Exit status when a target URL cannot be reached (nothing was run): EXIT_STATUS.unreachable. */
export const UNREACHABLE = EXIT_STATUS.unreachable;

const HELP_AFTER = `
Targets (--target and --compare may be repeated):
  <url>                 any role of a running Portolan system (portolan start, portolan mock), e.g.
                        http://127.0.0.1:8080: its role map (GET ${ROLE_MAP_PATH}) names every
                        role, and each operation goes to the role that serves it. Without a role map,
                        every operation goes to this URL, and the roles it does not serve (every
                        request answered 404) are reported as not served by this target, not as failures.
  <role>=<url>          one role: ${ROLE_NAMES.join(', ')}
  <interface>=<url>     one interface: ${INTERFACES.slice(0, 4)
    .map((i) => i.name)
    .join(', ')},
                        ${INTERFACES.slice(4)
                          .map((i) => i.name)
                          .join(', ')}
  reference             start the reference system in this process (a temporary store) and check it
  prism                 start the Prism mocks in this process and check them

Config file (--config, YAML or JSON), for a build that publishes no role map:
  roles: { gateway: http://10.0.0.5:8080, mapping: http://10.0.0.5:8081, device: https://10.0.0.9 }
  registrationHost: gw.example.com:8080              # optional: the Host registration is routed by
  credentials: { admin: { password: MY_PASSWORD } }  # optional: environment variables holding them
  allowWrites: false                                 # optional: as --allow-writes

Writes: against a target it did not start, the run sends nothing that creates or changes data (a chart,
a session, a deployment...): those operations and scenarios are skipped and counted in the summary.
--allow-writes sends them, and what they create stays in the target (some, like charts, cannot be
deleted). The reference system and the Prism mocks started here, and any Prism mock, always get them.

Prism mocks (prism, or a URL whose role map says so): checked statelessly, with the known gaps of the
mocks (conformance/data/prism-known-failures.yaml) applied unless --no-known-failures.

Credentials come from the environment, never the command line: CONFORMANCE_ADMIN_USER and
CONFORMANCE_ADMIN_PASSWORD (else PORTOLAN_ADMIN_USER / PORTOLAN_ADMIN_PASSWORD) for the administrative
operations; CONFORMANCE_REGISTRATION_USER and CONFORMANCE_REGISTRATION_PASSWORD for a user the
registration endpoint accepts. An operation whose credential is not set is skipped, saying which.

Output: TAP on stdout, then the summary as TAP comments. Its first line is the headline: PASS only when
nothing failed, with how many operations are conformant, fail, answer 501 (not implemented), are skipped
or not served, each counted once. Every failure comes with a curl command that repeats its request
(credentials as shell variables, e.g. "\${PORTOLAN_ADMIN_PASSWORD}").

Exit status: 0 nothing failed, 1 a failure (or a known failure that did not happen), 2 a usage error,
3 a target URL cannot be reached (nothing is run; one line per URL).

Examples:
  portolan conformance --target reference               # the reference system, started here
  portolan conformance --target prism                   # the Prism mocks, started here
  portolan conformance --target http://127.0.0.1:8080   # the system portolan start runs
  portolan conformance --target http://127.0.0.1:9080   # the mocks portolan mock runs
`;

type Args = {
  target?: string[];
  config?: string;
  compare?: string[];
  spec?: InterfaceName[];
  safe?: boolean;
  stateless?: boolean;
  allowWrites?: boolean;
  knownFailures?: string | false;
  report?: string;
  json?: string;
  seed?: number;
  fuzzRuns?: number;
  scenario?: string[];
  scenarios: boolean;
  var?: Record<string, unknown>;
  requireImplemented?: boolean;
  strict?: boolean;
  requireCoverage?: boolean;
  timeout: number;
  quiet?: boolean;
};

class UsageError extends Error {}

const nonNegative = (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a non-negative integer.');
  return Number(value);
};
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];
const KNOWN_SPECS = INTERFACES.map((i) => i.name as string);
const collectSpec = (value: string, previous: InterfaceName[] | undefined) => {
  if (!KNOWN_SPECS.includes(value)) throw new InvalidArgumentError(`unknown; known: ${KNOWN_SPECS.join(', ')}.`);
  return [...(previous ?? []), value as InterfaceName];
};
const collectVar = (pair: string, previous: Record<string, unknown> | undefined) => {
  const eq = pair.indexOf('=');
  if (eq < 1) throw new InvalidArgumentError('expected name=value.');
  const value = pair.slice(eq + 1);
  return { ...previous, [pair.slice(0, eq)]: /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value };
};

/** The command: its options, help and action (`run` gets the parsed options). */
function buildProgram(io: Pick<CliIo, 'stdout' | 'stderr'>, run: (args: Args) => Promise<void>): Command {
  return portolanCommand(NAME, io)
    .description(
      'Check a running implementation against the specs: every operation with valid requests built from the\n' +
        'examples and invalid ones built from the schemas, the scenarios, and fuzzing.',
    )
    .option('--target <target>', 'what to check: a URL, role=url, interface=url, reference or prism (repeatable)', collect)
    .option('--config <file>', 'where each role runs (YAML or JSON; see below), for a build without a role map')
    .option('--compare <target>', 'run the same checks against a second target and report where they differ', collect)
    .option('--spec <name>', 'only this interface (repeatable)', collectSpec)
    .option('--safe', 'for real devices: nothing destructive, no wrong passwords, no fuzzing unless --fuzz-runs')
    .option('--stateless', 'for mocks that keep no state: no wrong passwords, no scenarios unless --scenario, no fuzzing')
    .option('--allow-writes', 'send requests that create or change data to a target this run did not start')
    .option('--known-failures <file>', 'where the target is known to break its specs, with why (YAML): reported, not failed')
    .option('--no-known-failures', "don't apply the Prism mocks' known gaps to a Prism target")
    .option('--report <file>', 'write JUnit XML')
    .option('--json <file>', 'write the JSON summary')
    .option('--seed <n>', 'fuzzing seed (printed on every run; the same seed repeats the run)', nonNegative)
    .option('--fuzz-runs <n>', `fuzz runs per operation (default ${DEFAULT_FUZZ_RUNS}, 0 in safe and stateless mode)`, nonNegative)
    .option('--scenario <name>', 'only this scenario (repeatable)', collect)
    .option('--no-scenarios', 'run no scenario')
    .option('--var <name=value>', 'set a variable of conformance/data/variables.yaml (limits, hosts)', collectVar)
    .option('--require-implemented', 'operations and scenarios that answer 501 fail the run')
    .addOption(new Option('--strict', 'the former name of --require-implemented').hideHelp())
    .option('--require-coverage', 'a documented status nothing exercised nor explains fails the run')
    .option('--timeout <ms>', 'time limit of each request and of the first connection to each URL', nonNegative, 10_000)
    .option('--quiet', 'no progress lines on stderr')
    .addHelpText('after', HELP_AFTER)
    .action(async (options: Args) => run(options));
}

/** The help text of `portolan conformance --help`. */
export const USAGE = `${buildProgram({ stdout: () => {}, stderr: () => {} }, async () => {}).helpInformation()}${HELP_AFTER}`;

/**
 * Runs the command line; resolves to the exit status (EXIT_STATUS).
 *
 * @example
 * process.exitCode = await main(['--target', 'http://127.0.0.1:8080'], { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t), env: process.env });
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let code: number = EXIT_STATUS.pass;
  const program = buildProgram(io, async (args) => {
    code = await runChecks(
      {
        ...args,
        target: args.target ?? [],
        compare: args.compare ?? [],
        spec: args.spec ?? [],
        scenario: args.scenario ?? [],
        var: args.var ?? {},
      },
      io,
    );
  });
  return runCommandLine(program, argv, () => code);
}

/** A target ready to be checked: where each role is, and what kind of target it is. */
type Prepared = {
  targets: TargetMap;
  credentials?: Record<string, Credential>;
  credentialVariables?: CredentialVariables;
  variables?: Record<string, unknown>;
  stateless?: boolean;
  /** A Prism mock: its known gaps apply by default, the hints name Prism. */
  prismMock?: boolean;
  /** Why writes may be sent to it whatever --allow-writes says (it was started here, or keeps nothing). */
  writable?: string;
  /** Where the role URLs came from, in words. */
  routing?: string;
  servedRolesFrom?: string;
};

type Checked = Args & Required<Pick<Args, 'target' | 'compare' | 'spec' | 'scenario' | 'var'>>;

async function runChecks(args: Checked, io: CliIo): Promise<number> {
  if (args.target.length === 0 && !args.config) return usageError(NAME, io, '--target or --config is required');
  const started: { stop(): Promise<void> }[] = [];
  const progress = (line: string) => !args.quiet && io.stderr(`${line}\n`);
  try {
    const explicit = args.knownFailures ? loadKnownFailures(args.knownFailures) : undefined;
    const primary = await prepare(args.target, '--target', started, args, io, args.config);
    const other = args.compare.length > 0 ? await prepare(args.compare, '--compare', started, args, io) : undefined;
    // A dead target is one line per URL, before anything runs, not one connection error per request.
    const [deadPrimary, deadOther] = await Promise.all([
      findUnreachable(primary.targets, { timeoutMs: args.timeout }),
      other ? findUnreachable(other.targets, { timeoutMs: args.timeout }) : [],
    ]);
    const dead = [...deadPrimary.map((d) => unreachableLine(d, '--target')), ...deadOther.map((d) => unreachableLine(d, '--compare'))];
    if (dead.length > 0) {
      io.stderr(`${dead.join('\n')}\n`);
      return UNREACHABLE;
    }
    const writes = writesPolicy(args, [primary, ...(other ? [other] : [])]);
    const base: Omit<ConformanceOptions, 'targets'> = {
      safe: args.safe ?? false,
      seed: args.seed ?? Math.floor(Math.random() * 2 ** 31),
      ...(args.fuzzRuns !== undefined ? { fuzzRuns: args.fuzzRuns } : {}),
      ...(args.spec.length > 0 ? { interfaces: args.spec } : {}),
      ...(!args.scenarios ? { scenarios: [] } : args.scenario.length > 0 ? { scenarios: args.scenario } : {}),
      timeoutMs: args.timeout,
      env: io.env,
      writes,
      ...(args.quiet ? {} : { onProgress: (line: string) => io.stderr(`${line}\n`) }),
    };
    const options = (target: Prepared): ConformanceOptions => {
      const known = knownFailuresOf(target, args, explicit);
      return {
        ...base,
        targets: target.targets,
        stateless: (args.stateless ?? false) || (target.stateless ?? false),
        ...(known ? { knownFailures: known } : {}),
        ...(target.credentials ? { credentials: target.credentials } : {}),
        ...(target.credentialVariables ? { credentialVariables: target.credentialVariables } : {}),
        ...(target.routing ? { routing: target.routing } : {}),
        ...(target.servedRolesFrom ? { servedRolesFrom: target.servedRolesFrom } : {}),
        ...(target.prismMock ? { prismMock: true } : {}),
        variables: { ...target.variables, ...args.var },
      };
    };
    const result = await runConformance(options(primary));
    let compared: { result: RunResult; differences: Difference[] } | undefined;
    if (other) {
      progress('-- compare target --');
      const second = await runConformance(options(other));
      compared = { result: second, differences: compareRuns(result, second) };
    }
    return report(result, compared, args, io);
  } catch (error) {
    if (error instanceof UsageError) return usageError(NAME, io, error.message);
    io.stderr(`portolan ${NAME}: ${withoutCredentials((error as Error).message.split('\n')[0]!)}\n`);
    return EXIT_STATUS.fail;
  } finally {
    await Promise.all(started.map((r) => r.stop()));
  }
}

/** Prints TAP and the summary, writes the files asked for; the exit status. */
function report(result: RunResult, compared: { result: RunResult; differences: Difference[] } | undefined, args: Checked, io: CliIo) {
  const requireImplemented = (args.requireImplemented || args.strict) ?? false;
  const requireCoverage = args.requireCoverage ?? false;
  const differences = compared?.differences ?? [];
  const points = differences
    .filter((d) => d.conflict)
    .map((d) => tapPoint(false, `targets differ: ${d.key}`, { what: d.what, detail: d.detail }));
  io.stdout(toTap(result, points));
  const options = { requireImplemented, requireCoverage, differences };
  const lines = [...summaryLines(result, options), ...coverageLines(result)];
  if (compared) {
    lines.push(
      ...differentialLines(
        differences,
        { a: label(result.targets), b: label(compared.result.targets) },
        unmatched(result, compared.result),
      ),
    );
    lines.push(`compare target: ${headline(compared.result, { requireImplemented, requireCoverage })}`);
  }
  // The headline again, last: the first summary line is far above the coverage matrix.
  lines.push(`result: ${headline(result, options)}`);
  io.stdout(`${asComments(lines)}\n`);
  if (args.report) writeFileSync(args.report, toJUnit(result, differences, { requireImplemented, requireCoverage }));
  if (args.json)
    writeFileSync(
      args.json,
      `${JSON.stringify(toJsonSummary(result, { ...options, ...(compared ? { compareTargets: compared.result.targets } : {}) }), null, 2)}\n`,
    );
  return verdict(result, options).ok ? EXIT_STATUS.pass : EXIT_STATUS.fail;
}

/**
 * Where each role of a target is: started here (`reference`, `prism`), from the role map of a bare URL,
 * from the config file, and key=url pairs over both.
 */
async function prepare(
  values: readonly string[],
  option: '--target' | '--compare',
  started: { stop(): Promise<void> }[],
  args: Checked,
  io: CliIo,
  configPath?: string,
): Promise<Prepared> {
  const progress = (line: string) => !args.quiet && io.stderr(`${line}\n`);
  let parsed;
  try {
    parsed = parseTargets(values, option);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if ((parsed.prism || parsed.reference) && configPath)
    throw new UsageError(`--config and --target ${parsed.prism ? 'prism' : 'reference'} are two targets: give one`);
  if (parsed.prism) {
    progress('starting the Prism mocks...');
    const prism = await startPrismTarget();
    started.push(prism);
    return {
      targets: prism.targets,
      credentials: prism.credentials,
      stateless: true,
      prismMock: true,
      writable: 'the Prism mocks this run started keep nothing',
    };
  }
  if (parsed.reference) {
    progress('starting the reference system...');
    const reference = await startReferenceTarget();
    started.push(reference);
    return { ...reference, writable: 'the reference system this run started, in a temporary store' };
  }
  const { '*': url, ...named } = parsed.map;
  if (configPath) {
    let config;
    let credentials;
    try {
      config = loadTargetConfig(configPath);
      credentials = configCredentials(config, io.env, configPath);
    } catch (error) {
      throw new UsageError((error as Error).message.split('\n').join(' '));
    }
    if (config.allowWrites) args.allowWrites = true;
    const targets = { ...config.targets, ...parsed.map };
    return {
      targets,
      credentials,
      credentialVariables: config.credentialVariables,
      ...(config.registrationHost ? { variables: { registrationHost: config.registrationHost } } : {}),
      routing: `from ${configPath} (${Object.keys(targets).join(', ')})`,
      ...(targets['*'] === undefined ? { servedRolesFrom: configPath } : {}),
    };
  }
  if (url === undefined) return { targets: parsed.map };
  const map = await fetchRoleMap(url, { timeoutMs: args.timeout });
  if (!map) {
    progress(`no role map at ${withoutCredentials(url)}${ROLE_MAP_PATH}: every operation goes to ${withoutCredentials(url)}`);
    return { targets: parsed.map };
  }
  const routing = describeRoleMap(map);
  progress(`roles ${routing}`);
  const prism = map.kind === 'prism-mock';
  // A user and password in the URL given (a proxy in front of every role) go to every role of the map.
  const given = new URL(url);
  const withUser = (roleUrl: string) => {
    if (!given.username && !given.password) return roleUrl;
    const u = new URL(roleUrl);
    u.username = given.username;
    u.password = given.password;
    return u.href.replace(/\/+$/, '');
  };
  const fromMap = Object.fromEntries(Object.entries(roleMapTargets(map)).map(([role, roleUrl]) => [role, withUser(roleUrl)]));
  return {
    targets: { ...fromMap, ...named },
    ...(map.registrationHost ? { variables: { registrationHost: map.registrationHost } } : {}),
    routing,
    servedRolesFrom: `the role map of ${map.source}`,
    // A Prism mock checks only that a credential is there: made-up ones, never the environment's.
    ...(prism ? { stateless: true, prismMock: true, writable: 'a Prism mock keeps nothing', credentials: prismCredentials() } : {}),
  };
}

/** Whether writes are sent: --allow-writes, or every target was started here or keeps nothing. */
function writesPolicy(args: Args, targets: readonly Prepared[]): WritesPolicy {
  if (args.allowWrites) return { sent: true, why: '--allow-writes: what the run created stays in the target' };
  const notWritable = targets.find((t) => !t.writable);
  if (!notWritable) return { sent: true, why: [...new Set(targets.map((t) => t.writable!))].join('; ') };
  const urls = [...new Set(Object.values(printableTargets(notWritable.targets)))];
  const more = urls.length > 1 ? ` and ${urls.length - 1} more` : '';
  return { sent: false, why: `a target this run did not start: ${urls[0]}${more}` };
}

/** --known-failures for every target; by default, the Prism mocks' known gaps for a Prism mock; none after --no-known-failures. */
function knownFailuresOf(target: Prepared, args: Args, explicit: KnownFailure[] | undefined): KnownFailure[] | undefined {
  if (args.knownFailures === false) return undefined;
  if (explicit) return explicit;
  return target.prismMock ? loadKnownFailures(PRISM_KNOWN_FAILURES) : undefined;
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

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  });
}
