// Reads the seed table of specs/README.md ("From the seed to the specs") into the spec pointers each
// file's seed material lives at. A cell names elements two ways, both understood here:
// - `file.yaml#/pointer`, with continuations `, /last/segments` that replace the pointer's last segments;
// - `operation <operationId>` (or a bare operationId), followed by status codes, `requestBody`,
//   `parameter <name>` up to the next operationId of the cell (a status named after `;` still belongs to it).
// Cells that begin with "designed" name designed elements only, and are not seed material.
import { isObject, toPointer } from '../../src/lib/contract/json-pointer.ts';
import { HTTP_METHODS } from '../../src/lib/spec-catalog.ts';

type Doc = Record<string, unknown>;
type OperationRef = { file: string; pointer: string; op: Record<string, unknown> };

function operationIndex(docs: ReadonlyMap<string, Doc>): Map<string, OperationRef> {
  const index = new Map<string, OperationRef>();
  for (const [file, doc] of docs) {
    for (const [path, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
      for (const method of HTTP_METHODS) {
        const op = isObject(item) ? item[method] : undefined;
        if (isObject(op) && typeof op.operationId === 'string')
          index.set(op.operationId, { file, pointer: toPointer(['paths', path, method]), op });
      }
    }
  }
  return index;
}

/** The elements column of every row of the seed section's tables. */
function elementCells(readme: string): string[] {
  const section = readme.split(/^## From the seed to the specs$/m)[1] ?? '';
  return [...section.matchAll(/^\|[^|\n]*\|[^|\n]*\|(.*)\|\s*$/gm)]
    .map((m) => m[1]!.trim())
    .filter((c) => c !== 'spec elements' && !/^-+$/.test(c));
}

/** Whether a README has a seed table at all (without one, no spec needs to be parsed to read it). */
export const hasSeedTable = (readme: string) => elementCells(readme).length > 0;

/** Seed pointers by file name (`mapping.yaml`), from the README text and the parsed specs. */
export function seedPointers(readme: string, docs: ReadonlyMap<string, Doc>): Map<string, Set<string>> {
  const result = new Map<string, Set<string>>();
  const add = (file: string, pointer: string) => {
    if (!result.has(file)) result.set(file, new Set());
    result.get(file)!.add(pointer.replace(/\.$/, ''));
  };
  const operations = operationIndex(docs);
  const opPattern = new RegExp(`\\b(${[...operations.keys()].join('|')})\\b`, 'g');
  for (const cell of elementCells(readme)) {
    if (/^\(?designed\b/i.test(cell)) continue;
    for (const m of cell.matchAll(/([a-z-]+\.yaml)#(\/[^\s,;)`|]*)((?:,\s*\/[^\s,;)`|]*)*)/g)) {
      const [, file, base, continuations] = m as unknown as [string, string, string, string];
      add(file, base);
      for (const c of continuations
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const segments = c.split('/').length - 1;
        add(file, base.split('/').slice(0, -segments).join('/') + c);
      }
    }
    const mentions = [...cell.matchAll(opPattern)];
    mentions.forEach((m, i) => {
      const ref = operations.get(m[1]!)!;
      add(ref.file, ref.pointer);
      const end = mentions[i + 1]?.index ?? cell.length;
      const tail = cell.slice(m.index + m[0].length, end);
      const responses = isObject(ref.op.responses) ? ref.op.responses : {};
      for (const s of tail.matchAll(/\b([1-5]\d\d|default)\b/g)) if (s[1]! in responses) add(ref.file, `${ref.pointer}/responses/${s[1]}`);
      if (/\brequestBody\b/.test(tail)) add(ref.file, `${ref.pointer}/requestBody`);
      for (const p of tail.matchAll(/\bparameter `?([\w.-]+)/g)) add(ref.file, `${ref.pointer}/parameters/${p[1]}`);
    });
  }
  return result;
}
