import { readFileSync } from 'node:fs';
import t from 'tap';
import * as api from './index.ts';
// Types are checked by `tsc -p .`: each of these must be exported too.
import type { CliIo, OperationCounts, UnreachableTarget } from './index.ts';

// The package's public API (portolan/conformance) holds what conformance/README.md ("In code") names.

const README = readFileSync(new URL('./README.md', import.meta.url), 'utf8');
const IN_CODE = README.slice(README.indexOf('## In code'));

t.test('every function README "In code" names is exported by index.ts', async (t) => {
  // `name(...)` or `name` in backticks, a lower-case identifier: a function (option names excepted).
  const OPTIONS = new Set(['stateless', 'knownFailures', 'transport', 'config']);
  const named = [...IN_CODE.matchAll(/`([a-z]\w*)(?:\([^`]*\))?`/g)].map((m) => m[1]!).filter((n) => !OPTIONS.has(n));
  t.ok(named.length >= 15, `README names them (${named.join(', ')})`);
  for (const name of named) t.type(api[name as keyof typeof api], 'function', name);
});

t.test('the headline, the operation counts, the reachability probe, the hints and the exit statuses', async (t) => {
  for (const name of ['headline', 'operationCounts', 'findUnreachable', 'unreachableLine', 'applyHints', 'main'] as const)
    t.type(api[name], 'function', name);
  t.ok(Array.isArray(api.CAUSES) && api.CAUSES.some((c) => c.name === 'registration-host'), 'CAUSES, the table of known causes');
  t.same(api.EXIT_STATUS, { pass: 0, fail: 1, usage: 2, unreachable: 3 }, 'the exit statuses README "Exit status" lists');
  t.equal(api.UNREACHABLE, api.EXIT_STATUS.unreachable);
  for (const name of [
    'headline',
    'operationCounts',
    'OperationCounts',
    'findUnreachable',
    'unreachableLine',
    'UnreachableTarget',
    'applyHints',
    'CAUSES',
    'EXIT_STATUS',
  ])
    t.match(IN_CODE, `\`${name}\``, `README "In code" names ${name}`);

  const dead: UnreachableTarget = { keys: ['gateway'], url: 'http://127.0.0.1:9', code: 'ECONNREFUSED', reason: 'connection refused' };
  t.match(api.unreachableLine(dead), /^cannot reach gateway at http:\/\/127\.0\.0\.1:9: connection refused/);
  const counts: Partial<OperationCounts> = { operations: 0 };
  const io: Pick<CliIo, 'env'> = { env: {} };
  t.ok(counts && io);
});
