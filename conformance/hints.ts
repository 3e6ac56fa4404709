import type { LoginNote } from './auth.ts';
import type { AuthData, EnvSource } from './data-files.ts';
import type { OperationResult, ScenarioResult, Violation } from './model.ts';

/**
 * Failures with a known cause that one setting fixes, kept as a table: each cause looks at the whole
 * run (a pattern no single answer shows, e.g. every registration answered 404) and, when it holds,
 * gives a hint naming the setting. The hint is added to every failing line it explains (a violation's
 * `hint`, printed by formatViolation) and to operations skipped for that cause. Never a credential's
 * value: only the names of the variables that carry it.
 */

/** What the causes need to know about the run besides its results. */
export type HintContext = {
  /** The Host the engine sends with registration requests and the `--var` that sets it (data/operations.yaml). */
  registrationHost?: { value: string; variable?: string };
  /** The credentials (auth.yaml names) an operation's security sends; [] when it needs none (or none with a setting: bearer). */
  credentialsOf(interfaceName: string, operationId: string): string[];
  /** The interface of an operation (scenario steps name only the operationId). */
  interfaceOf(operationId: string): string | undefined;
  /** auth.yaml's credentials: the environment variables each is read from. */
  credentials: AuthData['credentials'];
  /** Names of the credentials the run has a value for. */
  configured: ReadonlySet<string>;
  /** What each cookie login of the run set (auth.ts): a login that never sets its scheme's cookie explains the refusals. */
  loginNotes?: readonly LoginNote[];
  /** The security schemes an operation's requirements name (with loginNotes: which interfaces a login serves). */
  schemesOf?(operationId: string): string[];
  /** The target is a Prism mock: a hint may name what Prism does. */
  prismMock?: boolean;
};

/** One answer of the run: a probe of an operation or a scenario step. */
export type Answer = { interface: string; operationId: string; status: number; kind: 'valid' | 'invalid' | 'auth' | 'step' };

/** A cause that holds in this run: which answers it explains, and the hint. */
export type Finding = { cause: string; explains(answer: Answer): boolean; hint: string };

export type Cause = { name: string; find(answers: readonly Answer[], operations: readonly OperationResult[], ctx: HintContext): Finding[] };

const REGISTER = 'registerClient';

export const CAUSES: readonly Cause[] = [
  {
    // The login answered, but without the cookie the scheme sends: every request went without a session.
    name: 'session-cookie-missing',
    find(answers, operations, ctx) {
      const findings: Finding[] = [];
      for (const note of ctx.loginNotes ?? []) {
        if (!note.cookie || note.set.includes(note.cookie)) continue;
        const cookie = note.cookie;
        for (const [name, ops] of Map.groupBy(operations, (o) => o.interface)) {
          if (!ops.some((o) => ctx.schemesOf?.(o.operationId).includes(note.scheme))) continue;
          if (!refusedInterface(name, ops, answers, ctx)) continue;
          const prism = ctx.prismMock
            ? `; the Prism mock answers the login with the spec's one Set-Cookie example, which holds no ${cookie} cookie, so it cannot be checked with a session (a known gap of the mocks)`
            : '';
          findings.push({
            cause: this.name,
            explains: (a) => a.interface === name && (a.status === 401 || a.status === 403),
            hint: `every authenticated ${name} operation was refused (401/403): the login ${note.operationId} set ${note.set.length > 0 ? `only ${note.set.join(', ')}` : 'no cookie'}, not the ${cookie} cookie the ${note.scheme} scheme sends, so no request carried a session${prism}`,
          });
        }
      }
      return findings;
    },
  },
  {
    // Client registration (D) is routed by Host: with another Host the request goes to the pool, which has no such path.
    name: 'registration-host',
    find(answers, _operations, ctx) {
      const registrations = answers.filter((a) => a.operationId === REGISTER);
      if (registrations.length === 0 || registrations.some((a) => a.status !== 404)) return [];
      const host = ctx.registrationHost;
      const option = host?.variable
        ? `--var ${host.variable}=<the target's registration host>`
        : 'the host header of registerClient in conformance/data/operations.yaml';
      return [
        {
          cause: this.name,
          explains: (a) => a.operationId === REGISTER && a.status === 404,
          hint: `every registration request${host ? ` (sent with Host ${host.value})` : ''} was answered 404: registration is routed by Host; pass ${option}, or set the target's registration host to it (on the reference gateway PORTOLAN_REGISTRATION_HOST, config registrationHost)`,
        },
      ];
    },
  },
  {
    // Every authenticated operation of an interface refused: the credentials, not the operations.
    name: 'credentials-refused',
    find(answers, operations, ctx) {
      const findings: Finding[] = [];
      for (const [name, ops] of Map.groupBy(operations, (o) => o.interface)) {
        const credentials = refusedInterface(name, ops, answers, ctx);
        if (!credentials) continue;
        findings.push({
          cause: this.name,
          explains: (a) => a.interface === name && (a.status === 401 || a.status === 403),
          hint: `every authenticated ${name} operation was refused (401/403): ${credentials.map((c) => credentialSetting(c, ctx)).join('; ')}`,
        });
      }
      return findings;
    },
  },
];

/**
 * When every valid request to the authenticated operations of an interface was refused (401/403): the
 * credentials those operations send; else undefined.
 */
function refusedInterface(
  name: string,
  ops: readonly OperationResult[],
  answers: readonly Answer[],
  ctx: HintContext,
): string[] | undefined {
  const authenticated = ops.filter((o) => o.outcome !== 'not-implemented' && ctx.credentialsOf(name, o.operationId).length > 0);
  const valid = answers.filter(
    (a) => a.kind === 'valid' && a.interface === name && authenticated.some((o) => o.operationId === a.operationId),
  );
  if (valid.length === 0 || valid.some((a) => a.status !== 401 && a.status !== 403)) return undefined;
  return [...new Set(authenticated.flatMap((o) => ctx.credentialsOf(name, o.operationId)))];
}

/** Where a credential comes from, without its value. */
function credentialSetting(name: string, ctx: HintContext): string {
  const source = ctx.credentials[name];
  if (!source) return `the '${name}' credential has no entry in conformance/data/auth.yaml`;
  const vars = envPairs(source.user, source.password);
  return ctx.configured.has(name)
    ? `check the '${name}' credential the engine sends, from ${vars} (it must be an account the target accepts)`
    : `the '${name}' credential is not set: set ${vars}`;
}

/** `A_USER / A_PASSWORD (else B_USER / B_PASSWORD)`, pairing the user's and the password's variables in order. */
function envPairs(user: EnvSource, password: EnvSource): string {
  const pairs = password.env.map((p, i) => (user.env[i] ? `${user.env[i]} / ${p}` : p));
  return pairs.length > 1 ? `${pairs[0]} (else ${pairs.slice(1).join(', else ')})` : (pairs[0] ?? 'conformance/data/auth.yaml');
}

/** Every answer of the run with its status (transport failures have none and match no cause). */
function answersOf(operations: readonly OperationResult[], scenarios: readonly ScenarioResult[], ctx: HintContext): Answer[] {
  const answers: Answer[] = [];
  // An operation the target does not serve answered nothing of its own.
  for (const o of operations.filter((o) => !o.notServed))
    for (const p of o.probes)
      if (p.status !== undefined) answers.push({ interface: o.interface, operationId: o.operationId, status: p.status, kind: p.kind });
  for (const s of scenarios) {
    for (const st of s.steps) {
      const name = st.operationId ? ctx.interfaceOf(st.operationId) : undefined;
      if (st.status !== undefined && st.operationId && name)
        answers.push({ interface: name, operationId: st.operationId, status: st.status, kind: 'step' });
    }
  }
  return answers;
}

/**
 * Finds the causes that hold and adds their hints: to each violation of an answer a cause explains,
 * and to each skipped operation with such an answer. The first cause of the table wins. Returns the findings.
 */
export function applyHints(
  operations: readonly OperationResult[],
  scenarios: readonly ScenarioResult[],
  ctx: HintContext,
  causes: readonly Cause[] = CAUSES,
): Finding[] {
  const answers = answersOf(operations, scenarios, ctx);
  const findings = causes.flatMap((c) => c.find(answers, operations, ctx));
  const hintFor = (a: Answer) => findings.find((f) => f.explains(a))?.hint;
  const mark = (violations: Violation[], hint: string | undefined) => {
    if (hint) for (const v of violations) v.hint ??= hint;
  };
  for (const o of operations) {
    if (o.notServed) continue;
    for (const p of o.probes) {
      if (p.status === undefined) continue;
      const hint = hintFor({ interface: o.interface, operationId: o.operationId, status: p.status, kind: p.kind });
      mark(p.violations, hint);
      if (hint && o.outcome === 'skipped') o.hint ??= hint;
    }
  }
  for (const s of scenarios) {
    for (const st of s.steps) {
      const name = st.operationId ? ctx.interfaceOf(st.operationId) : undefined;
      if (st.status !== undefined && st.operationId && name)
        mark(st.violations, hintFor({ interface: name, operationId: st.operationId, status: st.status, kind: 'step' }));
    }
  }
  return findings;
}

/** The distinct hints of a run, each with how many operations and violations it explains (for the summary). */
export function hintsOf(result: {
  operations: readonly OperationResult[];
  scenarios: readonly ScenarioResult[];
}): { hint: string; lines: number }[] {
  const counts = new Map<string, number>();
  const add = (hint: string | undefined) => hint && counts.set(hint, (counts.get(hint) ?? 0) + 1);
  for (const o of result.operations) {
    add(o.hint);
    for (const p of o.probes) for (const v of p.violations) add(v.hint);
  }
  for (const s of result.scenarios) for (const st of s.steps) for (const v of st.violations) add(v.hint);
  return [...counts].map(([hint, lines]) => ({ hint, lines }));
}
