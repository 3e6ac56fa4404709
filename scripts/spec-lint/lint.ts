import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { parse, YAMLError } from 'yaml';
import { ruleset } from './ruleset.ts';
import { checkExamples } from './examples.ts';
import { checkOrigin } from './origin.ts';
import { hasSeedTable, seedPointers } from './seed-trace.ts';
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

type Parsed = { doc: Record<string, unknown> } | { finding: Finding };

/** One YAML text parsed; a syntax error (or a document that is not a mapping) is one finding naming the file and the line. */
export function parseSpecText(text: string, file: string): Parsed {
  const syntax = (message: string): Parsed => ({
    finding: { file, tool: 'yaml', rule: 'syntax', severity: 'error', pointer: '', message },
  });
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    if (!(error instanceof YAMLError)) throw error;
    const line = error.linePos?.[0]?.line;
    const what = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    return syntax(`YAML syntax error${line ? ` at line ${line}` : ''}: ${what}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return syntax('not a YAML mapping (an OpenAPI document is one)');
  return { doc: doc as Record<string, unknown> };
}

// Parsed siblings by path, read once per run: the seed table of every spec of a folder needs them.
const siblings = new Map<string, Parsed>();

/**
 * The seed pointers of the spec at `path` (its text already parsed as `doc`), from the seed table of the
 * README.md beside it; none without a README or without a seed table (then nothing is parsed). The table
 * names operations by operationId, so then the other specs of the folder are parsed too (once a run); one
 * that does not parse is a finding (its operations are missing from the table) and is left out.
 */
function seedTable(path: string, doc: Record<string, unknown>): { pointers: Set<string>; findings: Finding[] } {
  const folder = dirname(path);
  const readme = join(folder, 'README.md');
  const readmeText = existsSync(readme) ? readFileSync(readme, 'utf8') : '';
  if (!hasSeedTable(readmeText)) return { pointers: new Set(), findings: [] };
  const docs = new Map<string, Record<string, unknown>>([[basename(path), doc]]);
  const findings: Finding[] = [];
  for (const name of readdirSync(folder).filter((f) => f.endsWith('.yaml') && f !== basename(path))) {
    const sibling = join(folder, name);
    let parsed = siblings.get(sibling);
    if (!parsed) {
      parsed = parseSpecText(readFileSync(sibling, 'utf8'), relative(process.cwd(), sibling));
      siblings.set(sibling, parsed);
    }
    if ('doc' in parsed) docs.set(name, parsed.doc);
    else
      findings.push({
        ...parsed.finding,
        message: `${parsed.finding.message} (the seed table of ${relative(process.cwd(), readme)} is read without its operations)`,
      });
  }
  return { pointers: seedPointers(readmeText, docs).get(basename(path)) ?? new Set(), findings };
}

/** Validates one spec with swagger-parser, lints it with Spectral, checks its examples and that designed elements say so. */
export async function lintSpec(path: string): Promise<Finding[]> {
  const file = relative(process.cwd(), path);
  const text = readFileSync(path, 'utf8');
  const parsed = parseSpecText(text, file);
  if (!('doc' in parsed)) return [parsed.finding];
  const { doc } = parsed;
  const findings: Finding[] = [];
  try {
    // validate() dereferences in place: give it its own copy.
    await SwaggerParser.validate(structuredClone(doc) as never);
  } catch (error) {
    const details = (error as { details?: { instancePath?: string; message?: string }[] }).details;
    if (details?.length) {
      for (const d of details) {
        findings.push({
          file,
          tool: 'swagger-parser',
          rule: 'validate',
          severity: 'error',
          pointer: d.instancePath ?? '',
          message: d.message ?? String(error),
        });
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
  findings.push(...checkExamples(structuredClone(doc), file));
  const seed = seedTable(path, doc);
  findings.push(...seed.findings);
  findings.push(...checkOrigin(doc, file, seed.pointers));
  return findings.filter((f) => !isException(f));
}
