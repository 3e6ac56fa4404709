import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { parse } from 'yaml';
import { ruleset } from './ruleset.ts';
import { checkExamples } from './examples.ts';
import { checkOrigin } from './origin.ts';
import { seedPointers } from './seed-trace.ts';
import { toPointer, type Finding } from './findings.ts';

const { Spectral, Document } = spectralCore;
const SEVERITY = ['error', 'warning', 'warning', 'warning'] as const; // spectral: error, warn, info, hint

/**
 * Findings that are right by the seed, each with its reason. Kept to a minimum and exact to the place.
 */
const EXCEPTIONS: readonly { file: string; rule: string; pointer: string; reason: string }[] = [
  {
    file: 'specs/device-config.yaml',
    rule: 'operation-success-response',
    pointer: '/paths/~1mgmt~1tm~1util~1bash/get/responses',
    reason: 'the seed: GET /mgmt/tm/util/bash always answers 403 (the component is not available for this operation)',
  },
];

const isException = (f: Finding) => EXCEPTIONS.some((e) => f.file.endsWith(e.file) && f.rule === e.rule && f.pointer === e.pointer);

let spectral: InstanceType<typeof Spectral> | undefined;
function getSpectral() {
  if (!spectral) {
    spectral = new Spectral();
    spectral.setRuleset(ruleset);
  }
  return spectral;
}

const seedTables = new Map<string, Map<string, Set<string>>>();
/**
 * The seed pointers of the specs in one folder, from the seed table of its README.md (none without one:
 * then nothing there is traceable to the seed). The table names operations by operationId, so every spec
 * of the folder is read.
 */
function seedTable(folder: string): Map<string, Set<string>> {
  let table = seedTables.get(folder);
  if (!table) {
    const readme = join(folder, 'README.md');
    const docs = new Map(readdirSync(folder).filter((f) => f.endsWith('.yaml')).map((f) => [f, parse(readFileSync(join(folder, f), 'utf8')) as Record<string, unknown>]));
    table = existsSync(readme) ? seedPointers(readFileSync(readme, 'utf8'), docs) : new Map();
    seedTables.set(folder, table);
  }
  return table;
}

/** Validates one spec with swagger-parser, lints it with Spectral, checks its examples and that designed elements say so. */
export async function lintSpec(path: string): Promise<Finding[]> {
  const file = relative(process.cwd(), path);
  const text = readFileSync(path, 'utf8');
  const findings: Finding[] = [];
  try {
    // validate() dereferences in place: give it its own copy.
    await SwaggerParser.validate(structuredClone(parse(text)));
  } catch (error) {
    const details = (error as { details?: { instancePath?: string; message?: string }[] }).details;
    if (details?.length) {
      for (const d of details) {
        findings.push({ file, tool: 'swagger-parser', rule: 'validate', severity: 'error', pointer: d.instancePath ?? '', message: d.message ?? String(error) });
      }
    } else {
      findings.push({ file, tool: 'swagger-parser', rule: 'validate', severity: 'error', pointer: '', message: (error as Error).message });
    }
  }
  const results = await getSpectral().run(new Document(text, spectralParsers.Yaml, path));
  for (const r of results) {
    findings.push({
      file,
      tool: 'spectral',
      rule: String(r.code),
      severity: SEVERITY[r.severity] ?? 'warning',
      pointer: toPointer(r.path),
      message: `${r.message} (line ${r.range.start.line + 1})`,
    });
  }
  findings.push(...checkExamples(parse(text), file));
  findings.push(...checkOrigin(parse(text), file, seedTable(dirname(path)).get(basename(path)) ?? new Set()));
  return findings.filter((f) => !isException(f));
}
