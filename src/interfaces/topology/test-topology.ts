import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';

const SPEC = new URL('../../../specs/topology.yaml', import.meta.url);

/** A request example of `createTopology` in specs/topology.yaml, so the tests follow the spec. */
export async function loadSpecExample<T>(name: string): Promise<T> {
  const document = parse(await readFile(SPEC, 'utf8')) as { paths: Record<string, { post?: { requestBody: { content: { 'application/json': { examples: Record<string, { value: T }> } } } } }> };
  const example = document.paths['/mgmt/cm/ssl-orch/api/topology']!.post!.requestBody.content['application/json'].examples[name];
  if (!example) throw new Error(`no createTopology example '${name}'`);
  return structuredClone(example.value);
}
