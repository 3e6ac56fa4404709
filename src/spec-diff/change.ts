// One difference between two versions of a spec, classified the way a client sees it: breaking when a
// client or server built against the old version can fail against the new one.

/** One classified change: `location` is a JSON pointer into the new document (the old one when removed). */
export type Change = {
  kind: ChangeKind;
  breaking: boolean;
  location: string;
  message: string;
};

/** Every kind of change the differ reports; the name says where and what. */
export type ChangeKind =
  | 'operation-removed'
  | 'operation-added'
  | 'operation-id-changed'
  | 'path-parameter-renamed'
  | 'parameter-removed'
  | 'parameter-added'
  | 'parameter-became-required'
  | 'parameter-became-optional'
  | 'request-body-removed'
  | 'request-body-added'
  | 'request-body-became-required'
  | 'request-body-became-optional'
  | 'request-media-type-removed'
  | 'request-media-type-added'
  | 'response-status-removed'
  | 'response-status-added'
  | 'response-media-type-removed'
  | 'response-media-type-added'
  | 'response-header-removed'
  | 'response-header-added'
  | 'property-removed'
  | 'property-added'
  | 'property-became-required'
  | 'property-became-optional'
  | 'type-changed'
  | 'format-changed'
  | 'null-allowed'
  | 'null-refused'
  | 'enum-narrowed'
  | 'enum-widened'
  | 'constraint-narrowed'
  | 'constraint-widened'
  | 'additional-properties-refused'
  | 'additional-properties-allowed'
  | 'variant-removed'
  | 'variant-added'
  | 'security-requirement-added'
  | 'security-alternative-added'
  | 'description-changed'
  | 'examples-changed';

/** Which side of the wire a schema is on: a request is written by clients, a response read by them. */
export type Direction = 'request' | 'response';

/** Collects changes as they are found. */
export class ChangeLog {
  readonly changes: Change[] = [];
  add(kind: ChangeKind, breaking: boolean, location: string, message: string): void {
    this.changes.push({ kind, breaking, location, message });
  }
}

/** One line per change: `location: sentence`. */
export const formatChange = (c: Change) => `${c.location || '/'}: ${c.message}`;
