// One difference between two versions of a spec, the way a client sees it: which check found it (its id
// and severity), the operation it is in (none for a change outside operations: components, info,
// servers), a sentence in plain words, and the JSON pointer of the place (for scripts, never shown in text).
import { CHECKS, type CheckId, type Severity } from './checks.ts';

/** The operation a change is in: `POST /api/charts` (the path as the newer spec writes it). */
export type OperationRef = { method: string; path: string; operationId?: string };

/** One classified change. */
export type Change = {
  id: CheckId;
  severity: Severity;
  /** Absent for a change outside operations (spec-wide). */
  operation?: OperationRef;
  /** Plain words, relative to the operation: `request field "name" became required`. */
  message: string;
  /** JSON pointer into the newer document (the older one for a removal). */
  pointer: string;
};

/** Which side of the wire a schema is on: a request is written by clients, a response read by them. */
export type Direction = 'request' | 'response';

/**
 * Where in an operation a value is, in words. `root` names the value itself (`request body`, `query
 * parameter "limit"`, `response 200 body`), `field` the prefix of a field inside it (`request field`,
 * `response 200 field`), `path` the field's segments from the root (`position`, `lat`; `[]` an array
 * item, `*` a map value, `oneOf[1]` a variant), `media` the media type when the body has more than one.
 */
export type Subject = { root: string; field: string; path: readonly string[]; media?: string };

/** A place being compared: its JSON pointer and its words. */
export type Place = { pointer: string; subject: Subject };

const renderPath = (path: readonly string[]) =>
  path.reduce((text, segment) => (segment === '[]' || text === '' ? text + segment : `${text}.${segment}`), '');

/**
 * The words for a place: `request field "position.lat"`, `response 200 body`, `query parameter "limit"`.
 * @example describe({ root: 'request body', field: 'request field', path: ['name'] }) // 'request field "name"'
 */
export function describe(subject: Subject): string {
  const words = subject.path.length === 0 ? subject.root : `${subject.field} "${renderPath(subject.path)}"`;
  return subject.media ? `${words} (${subject.media})` : words;
}

/** Collects changes as they are found; `within` gives a log whose changes are in one operation. */
export class ChangeLog {
  readonly changes: Change[];
  readonly operation: OperationRef | undefined;
  constructor(changes: Change[] = [], operation?: OperationRef) {
    this.changes = changes;
    this.operation = operation;
  }
  /** A log writing into the same list, its changes in `operation`. */
  within(operation: OperationRef): ChangeLog {
    return new ChangeLog(this.changes, operation);
  }
  /** One change found by check `id` (at its default severity) at `pointer`. */
  add(id: CheckId, pointer: string, message: string): void {
    this.changes.push({ id, severity: CHECKS[id].severity, ...(this.operation ? { operation: this.operation } : {}), message, pointer });
  }
}

/**
 * The operation's name in words: `POST /api/charts`.
 * @example operationName({ method: 'POST', path: '/api/charts' }) // 'POST /api/charts'
 */
export const operationName = (op: OperationRef) => `${op.method} ${op.path}`;

/**
 * One change as a self-contained line: `POST /api/charts: request field "name" became required`
 * (`spec-wide: ...` outside operations).
 * @example formatChange(change) // 'POST /api/charts: request field "name" became required'
 */
export const formatChange = (c: Change) => `${c.operation ? operationName(c.operation) : 'spec-wide'}: ${c.message}`;
