// Turns spec text into the dereferenced document the differ compares: local `$ref`s resolved by
// swagger-parser (a recursive schema stays a cycle of objects; the differ stops at a repeat). External
// `$ref`s are refused, never followed: the text may come from any commit, so a file ref would be read
// from the working tree (relative to the cwd) and an http ref fetched from the network.
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse } from 'yaml';
import { isObject, toPointer } from '../lib/contract/json-pointer.ts';
import { diffDocuments } from './diff.ts';
import type { Change } from './change.ts';

export type SpecVersionDiff = { version: { before: string; after: string }; changes: Change[] };

/** The first `$ref` that does not point into the document itself, with where it is; undefined when none. */
export function findExternalRef(doc: unknown): { ref: string; pointer: string } | undefined {
  const seen = new Set<unknown>();
  const walk = (value: unknown, path: string[]): { ref: string; pointer: string } | undefined => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return undefined;
    seen.add(value);
    if (isObject(value) && typeof value.$ref === 'string' && !value.$ref.startsWith('#'))
      return { ref: value.$ref, pointer: toPointer(path) };
    for (const [key, child] of Object.entries(value)) {
      const found = walk(child, [...path, key]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(doc, []);
}

/**
 * A YAML or JSON OpenAPI text (or an already parsed object), dereferenced. Throws on unparsable text, a
 * broken `$ref`, or an external `$ref` (one line naming the ref and where it is).
 */
export async function loadDocument(source: string | object): Promise<Record<string, unknown>> {
  const doc = typeof source === 'string' ? (parse(source) as unknown) : structuredClone(source);
  if (typeof doc !== 'object' || doc === null) throw new Error('not an OpenAPI document');
  const external = findExternalRef(doc);
  if (external)
    throw new Error(
      `external $ref '${external.ref}' at ${external.pointer || '/'}: spec-diff compares self-contained specs only (it does not follow refs to other files or URLs)`,
    );
  return (await SwaggerParser.dereference(doc as never, { resolve: { external: false } })) as unknown as Record<string, unknown>;
}

/**
 * Both versions of one spec compared: its `info.version` before and after and every change. `labels` name
 * the two versions in an error (`at abc123`, `in the working tree`).
 */
export async function diffSpecs(
  before: string | object,
  after: string | object,
  labels = { before: '(before)', after: '(after)' },
): Promise<SpecVersionDiff> {
  const load = (source: string | object, label: string) =>
    loadDocument(source).catch((error: Error) => {
      throw new Error(`${label}: ${error.message.split('\n')[0]}`);
    });
  const [a, b] = await Promise.all([load(before, labels.before), load(after, labels.after)]);
  const version = (d: Record<string, unknown>) => String((d.info as { version?: unknown } | undefined)?.version ?? '');
  return { version: { before: version(a), after: version(b) }, changes: diffDocuments(a, b) };
}
