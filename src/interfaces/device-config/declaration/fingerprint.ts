import { createHash } from 'node:crypto';
import { isRecord } from './model.ts';

/**
 * A digest of a JSON value that ignores the order of object keys (not of arrays): two declarations
 * have the same fingerprint exactly when isSameTenant says they are the same (same-tenant.ts). Made
 * where a declaration is planned (the checker's thread), so that telling "no change" from a change
 * costs this thread a comparison of two strings, not a walk of megabytes. Recursive: a checked
 * declaration is at most 64 levels deep (request.ts).
 */
export function fingerprintOf(value: unknown): string {
  const hash = createHash('sha256');
  const write = (node: unknown): void => {
    if (Array.isArray(node)) {
      hash.update('[');
      for (const item of node) {
        write(item);
        hash.update(',');
      }
      hash.update(']');
    } else if (isRecord(node)) {
      hash.update('{');
      for (const key of Object.keys(node).sort()) {
        hash.update(JSON.stringify(key));
        hash.update(':');
        write(node[key]);
        hash.update(',');
      }
      hash.update('}');
    } else {
      hash.update(JSON.stringify(node) ?? 'undefined');
    }
  };
  write(value);
  return hash.digest('base64');
}
