import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import type { TopologyRequest } from '../../../generated/topology/types.gen.ts';

const SPEC = new URL('../../../specs/topology.yaml', import.meta.url);

/** A request example of `createTopology` in specs/topology.yaml, so the tests follow the spec. */
export async function loadSpecExample<T>(name: string): Promise<T> {
  const document = parse(await readFile(SPEC, 'utf8')) as {
    paths: Record<string, { post?: { requestBody: { content: { 'application/json': { examples: Record<string, { value: T }> } } } } }>;
  };
  const example = document.paths['/mgmt/cm/ssl-orch/api/topology']!.post!.requestBody.content['application/json'].examples[name];
  if (!example) throw new Error(`no createTopology example '${name}'`);
  return structuredClone(example.value);
}

/**
 * The spec's `l3Outbound` example with every object renamed by `suffix` (topology `sslo_<suffix>`, policy,
 * SSL settings, chain and service `*_<suffix>`), sent to the devices `targets`.
 */
export async function renamedRequest(suffix: string, targets: readonly string[]): Promise<TopologyRequest> {
  const body = await loadSpecExample<TopologyRequest>('l3Outbound');
  const text = JSON.stringify(body)
    .replaceAll('sslo_outbound', `sslo_${suffix}`)
    .replaceAll('policy_outbound', `policy_${suffix}`)
    .replaceAll('ssl_outbound', `ssl_${suffix}`)
    .replaceAll('chain_icap', `chain_${suffix}`)
    .replaceAll('icap_dlp', `icap_${suffix}`);
  return { ...(JSON.parse(text) as TopologyRequest), targetList: targets.map((name) => ({ type: 'DEVICE', name })) };
}
