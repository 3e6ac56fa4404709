/** One problem found in a spec, whatever tool found it. */
export type Finding = {
  file: string;
  tool: 'yaml' | 'swagger-parser' | 'spectral' | 'examples' | 'origin';
  rule: string;
  severity: 'error' | 'warning';
  /** JSON pointer into the document, '' for the whole document. */
  pointer: string;
  message: string;
};

export { toPointer } from '../../src/lib/contract/json-pointer.ts';

export function formatFinding(f: Finding): string {
  return `${f.file}${f.pointer ? `#${f.pointer}` : ''}: ${f.severity} ${f.tool}/${f.rule}: ${f.message}`;
}
