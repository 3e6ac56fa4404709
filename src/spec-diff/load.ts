// Turns spec text into the dereferenced document the differ compares: local `$ref`s resolved by
// swagger-parser (a recursive schema stays a cycle of objects; the differ stops at a repeat).
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse } from 'yaml';
import { diffDocuments } from './diff.ts';
import type { Change } from './change.ts';

export type SpecVersionDiff = { version: { before: string; after: string }; changes: Change[] };

/** A YAML or JSON OpenAPI text (or an already parsed object), dereferenced. Throws on unparsable text or a broken `$ref`. */
export async function loadDocument(source: string | object): Promise<Record<string, unknown>> {
  const doc = typeof source === 'string' ? (parse(source) as unknown) : structuredClone(source);
  if (typeof doc !== 'object' || doc === null) throw new Error('not an OpenAPI document');
  return (await SwaggerParser.dereference(doc as never)) as unknown as Record<string, unknown>;
}

/** Both versions of one spec compared: its `info.version` before and after and every change. */
export async function diffSpecs(before: string | object, after: string | object): Promise<SpecVersionDiff> {
  const [a, b] = await Promise.all([loadDocument(before), loadDocument(after)]);
  const version = (d: Record<string, unknown>) => String((d.info as { version?: unknown } | undefined)?.version ?? '');
  return { version: { before: version(a), after: version(b) }, changes: diffDocuments(a, b) };
}
