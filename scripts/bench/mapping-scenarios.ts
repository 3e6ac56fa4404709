// The scenarios of bench:mapping (its configurations' rows and its workers rows): the requests, the status
// each expects, and the load of one scenario.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { LoadResult, LoadSpec } from './load.ts';

export const SCENARIO_NAMES = ['get-list', 'get-one', 'post-valid', 'post-invalid'] as const;

export type ScenarioName = (typeof SCENARIO_NAMES)[number];
export type Request = { method: string; path: string; headers?: Record<string, string>; body?: string };
export type Scenario = { name: ScenarioName; label: string; request: Request; status: number };

/** The four scenarios; bodies come from the spec's examples, so they stay valid as it changes. */
export function scenarios(vesselId: string): Scenario[] {
  const spec = parse(readFileSync(new URL('../../specs/mapping.yaml', import.meta.url), 'utf8'));
  const chart = spec.paths['/api/charts'].post.requestBody.content['application/json'].examples.full.value as object;
  const json = { 'content-type': 'application/json' };
  return [
    { name: 'get-list', label: 'GET list', request: { method: 'GET', path: '/api/vessels' }, status: 200 },
    { name: 'get-one', label: 'GET one', request: { method: 'GET', path: `/api/vessels/${vesselId}` }, status: 200 },
    {
      name: 'post-valid',
      label: 'POST valid (201)',
      request: { method: 'POST', path: '/api/charts', headers: json, body: JSON.stringify(chart) },
      status: 201,
    },
    {
      name: 'post-invalid',
      label: 'POST invalid (400)',
      request: { method: 'POST', path: '/api/charts', headers: json, body: JSON.stringify({ ...chart, captain: 'James Cook' }) },
      status: 400,
    },
  ];
}

/** The scenarios named in `wanted` (--scenarios), GET one asking for the first vessel `base` lists. */
export async function chooseScenarios(base: string, wanted: readonly string[]): Promise<Scenario[]> {
  const vessels = (await (await fetch(new URL('/api/vessels', base))).json()) as { data: { id: string }[] };
  const chosen = scenarios(vessels.data[0]!.id).filter((s) => wanted.includes(s.name));
  if (chosen.length !== wanted.length) throw new Error(`--scenarios: choose from ${SCENARIO_NAMES.join(', ')} (got ${wanted.join(',')})`);
  return chosen;
}

export async function send(base: string, { method, path, headers, body }: Request): Promise<Response> {
  return fetch(new URL(path, base), { method, ...(headers ? { headers } : {}), ...(body !== undefined ? { body } : {}) });
}

/** The load of one scenario against `url`. */
export function loadSpec(url: string, scenario: Scenario, connections: number, durationSeconds: number): LoadSpec {
  const { method, path, headers, body } = scenario.request;
  return { url, path, method, connections, durationSeconds, ...(headers ? { headers } : {}), ...(body !== undefined ? { body } : {}) };
}

/** Autocannon counts answers outside 2xx: every one is expected for the 400 scenario, none for the others. */
export const unexpectedOf = (result: LoadResult, scenario: Scenario) =>
  result.errors + (scenario.status < 300 ? result.non2xx : result.requests - result.non2xx);
