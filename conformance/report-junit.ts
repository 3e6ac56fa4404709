import { XMLBuilder } from 'fast-xml-parser';
import { formatViolation, type RunResult, type Violation } from './model.ts';
import type { Difference } from './differential.ts';
import { headline, operationCounts, type VerdictOptions } from './verdict.ts';

type Case = {
  '@_classname': string;
  '@_name': string;
  '@_time': string;
  failure?: { '@_message': string; '@_type': string; '#text': string };
  skipped?: { '@_message': string };
};
type Property = { '@_name': string; '@_value': string };
type Suite = {
  '@_name': string;
  '@_tests': number;
  '@_failures': number;
  '@_skipped': number;
  properties: { property: Property[] };
  testcase: Case[];
};

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, suppressEmptyNode: true });

/**
 * The run as JUnit XML for CI: a suite per interface (a case per probe: valid example, invalid
 * variant, missing or wrong credentials), one for the scenarios, one for fuzzing, and one for the
 * differential report when there is one. Not implemented and skipped checks are `<skipped>`. Every
 * suite carries the run's headline and counts (verdict.ts) as `<properties>` (`conformance.headline`,
 * `conformance.operations`, `conformance.conformant`, `conformance.notImplemented`, ...): JUnit has no
 * place for them above the suites.
 */
export function toJUnit(
  result: RunResult,
  differences: readonly Difference[] = [],
  options: Omit<VerdictOptions, 'differences'> = {},
): string {
  const suites = new Map<string, Case[]>();
  const add = (suite: string, c: Case) => suites.set(suite, [...(suites.get(suite) ?? []), c]);

  for (const op of result.operations) {
    const classname = `${op.interface}.${op.operationId}@${op.role}`;
    if (op.probes.length === 0 || op.outcome === 'not-implemented' || op.outcome === 'skipped') {
      const skipped = op.outcome === 'skipped' ? `${op.reason ?? 'skipped'}${op.hint ? ` — hint: ${op.hint}` : ''}` : undefined;
      add(
        op.interface,
        testCase(classname, 'operation', [], op.outcome === 'not-implemented' ? `not implemented: ${op.reason ?? 'answers 501'}` : skipped),
      );
      continue;
    }
    for (const p of op.probes) {
      // JUnit has no expected failure: a known one is skipped with its reason (as pytest reports xfail).
      const known =
        p.outcome === 'known-failure' ? `known failure: ${[...new Set(p.violations.map((v) => v.known))].join('; ')}` : undefined;
      const c = testCase(
        classname,
        `${p.kind}: ${p.name}`,
        p.violations,
        p.outcome === 'skipped' ? (p.reason ?? 'skipped') : known,
        p.status,
      );
      if (c.failure && p.reproduce) c.failure['#text'] = clean(`${c.failure['#text']}\nreproduce:\n${p.reproduce}`);
      add(op.interface, c);
    }
  }
  for (const s of result.scenarios) {
    const skipped =
      s.outcome === 'not-implemented' ? `not implemented: ${s.reason}` : s.outcome === 'skipped' ? (s.reason ?? 'skipped') : undefined;
    const violations = s.steps.flatMap((st) => st.violations);
    if (s.outcome === 'fail' && violations.length === 0)
      violations.push({ interface: '-', operationId: '-', check: 'setup', pointer: '', message: s.reason ?? 'failed' });
    const c = testCase(`scenario.${s.name}`, s.description.split('\n')[0]!, violations, skipped);
    const reproduce = s.steps.filter((st) => st.reproduce).map((st) => `# ${st.name}\n${st.reproduce}`);
    if (c.failure && reproduce.length > 0) c.failure['#text'] = clean(`${c.failure['#text']}\nreproduce:\n${reproduce.join('\n')}`);
    add('scenarios', c);
  }
  for (const f of result.fuzz) {
    const skipped = f.outcome === 'skipped' || f.outcome === 'not-implemented' ? (f.reason ?? f.outcome) : undefined;
    const c = testCase(
      `fuzz.${f.interface}.${f.operationId}@${f.role}`,
      `${f.runs} runs, seed ${f.seed}`,
      f.failure?.violations ?? [],
      skipped,
    );
    if (c.failure && f.failure)
      c.failure['#text'] = clean(
        `seed ${f.seed} path ${f.failure.path}\nrequest ${f.failure.request}\n${c.failure['#text']}${f.failure.reproduce ? `\nreproduce:\n${f.failure.reproduce}` : ''}`,
      );
    add('fuzz', c);
  }
  for (const unmet of result.unmetKnownFailures) {
    add('known failures', {
      '@_classname': 'known-failures',
      '@_name': clean(unmet),
      '@_time': '0',
      failure: { '@_message': clean(`did not happen: ${unmet}`), '@_type': 'known-failure', '#text': clean(unmet) },
    });
  }
  for (const d of differences) {
    add('differential', {
      '@_classname': `differential.${d.interface}.${d.operationId}`,
      '@_name': clean(d.key),
      '@_time': '0',
      ...(d.conflict ? { failure: { '@_message': clean(`${d.what}: ${d.a} vs ${d.b}`), '@_type': d.what, '#text': clean(d.detail) } } : {}),
    });
  }

  const counts = operationCounts(result);
  const property: Property[] = [
    { '@_name': 'conformance.headline', '@_value': clean(headline(result, { ...options, differences })) },
    ...Object.entries(counts).map(([name, value]) => ({ '@_name': `conformance.${name}`, '@_value': String(value) })),
  ];
  const testsuite: Suite[] = [...suites].map(([name, cases]) => ({
    '@_name': name,
    '@_tests': cases.length,
    '@_failures': cases.filter((c) => c.failure).length,
    '@_skipped': cases.filter((c) => c.skipped).length,
    properties: { property },
    testcase: cases,
  }));
  const all = testsuite.flatMap((s) => s.testcase);
  return builder.build({
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    testsuites: {
      '@_name': 'portolan conformance',
      '@_tests': all.length,
      '@_failures': all.filter((c) => c.failure).length,
      '@_skipped': all.filter((c) => c.skipped).length,
      '@_time': (result.durationMs / 1000).toFixed(3),
      testsuite,
    },
  }) as string;
}

function testCase(classname: string, name: string, violations: readonly Violation[], skipped?: string, status?: number): Case {
  const c: Case = { '@_classname': clean(classname), '@_name': clean(name), '@_time': '0' };
  if (skipped !== undefined) c.skipped = { '@_message': clean(skipped) };
  else if (violations.length > 0) {
    c.failure = {
      '@_message': clean(formatViolation(violations[0]!)),
      '@_type': violations[0]!.check,
      '#text': clean(`${status !== undefined ? `answered ${status}\n` : ''}${violations.map(formatViolation).join('\n')}`),
    };
  }
  return c;
}

/** XML 1.0 cannot carry control characters or lone surrogates (fuzzed requests may hold them). */
const clean = (text: string) =>
  text.replace(
    /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    '\uFFFD',
  );
