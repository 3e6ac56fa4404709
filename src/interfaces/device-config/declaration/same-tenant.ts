import { isRecord } from './model.ts';

/**
 * Whether a tenant's new declaration is the one stored (then its result is `no change`): deep
 * equality of JSON values, the order of an object's keys ignored, an array's order not. Iterative,
 * so no nesting depth can overflow the stack.
 */
export function isSameTenant(stored: unknown, next: unknown): boolean {
  const pairs: [unknown, unknown][] = [[stored, next]];
  while (pairs.length > 0) {
    const [a, b] = pairs.pop()!;
    if (a === b) continue;
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) return false;
      for (const [index, item] of a.entries()) pairs.push([item, b[index]]);
    } else if (isRecord(a) && isRecord(b)) {
      const keys = Object.keys(a);
      if (keys.length !== Object.keys(b).length) return false;
      for (const key of keys) {
        if (!Object.hasOwn(b, key)) return false;
        pairs.push([a[key], b[key]]);
      }
    } else {
      return false;
    }
  }
  return true;
}
