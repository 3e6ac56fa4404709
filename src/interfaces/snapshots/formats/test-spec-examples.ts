// The XML and JSON examples of specs/snapshots.yaml, paired by example name: the material of the XML
// and CSV tests, so they follow the spec when its examples change.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const SPEC = new URL('../../../../specs/snapshots.yaml', import.meta.url);
export const XML_TYPE = 'application/vnd.vendor.diagnostics.api+xml';
export const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';

type Json = Record<string, any>;
export type Example = {
  /** `operationId status example-name`, for messages. */
  where: string;
  /** The schema's name (components/schemas). */
  schema: string;
  name: string;
  /** Examples of the same name per media type. */
  byType: Record<string, unknown>;
};

const spec = parse(readFileSync(SPEC, 'utf8')) as Json;
const deref = (value: Json): Json =>
  typeof value?.$ref === 'string'
    ? deref(
        value.$ref
          .split('/')
          .slice(1)
          .reduce((node: Json, key: string) => node[key], spec),
      )
    : value;

/** Every named example of every response of every operation, with the schema it illustrates. */
export function responseExamples(): Example[] {
  const found: Example[] = [];
  for (const pathItem of Object.values(spec.paths as Json)) {
    for (const operation of Object.values(pathItem as Json)) {
      if (typeof operation?.operationId !== 'string') continue;
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        const byName = new Map<string, Example>();
        for (const [type, media] of Object.entries((deref(response).content ?? {}) as Json)) {
          const schema =
            String(media.schema?.$ref ?? '')
              .split('/')
              .pop() ?? '';
          for (const [name, example] of Object.entries((media.examples ?? {}) as Json)) {
            const entry = byName.get(name) ?? { where: `${operation.operationId} ${status} ${name}`, schema, name, byType: {} };
            entry.byType[type] = deref(example).value;
            byName.set(name, entry);
          }
        }
        found.push(...byName.values());
      }
    }
  }
  return found;
}
