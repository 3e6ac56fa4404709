import { isRecord } from './model.ts';

/** A value still to visit, and how it was reached (its parent's step, so a path is only built when needed). */
type Step = { value: unknown; depth: number; key: string | number; parent: Step | undefined };

/**
 * The path of the first value nested deeper than `limit` levels below `root` (root itself is level
 * 0), or undefined. Iterative: a hostile body nested 10 000 levels deep cannot overflow the stack
 * here, and once refused no recursive code (ajv, copies, comparisons) ever sees it. Each value is
 * visited once and the path is built only for the value found, so the work is linear in the size of
 * the body whatever its shape (a copied path per value was its depth times its width: 650 000 `{}` at
 * depth 60 took over a second).
 */
export function findTooDeep(root: unknown, limit: number): (string | number)[] | undefined {
  const stack: Step[] = [{ value: root, depth: 0, key: '', parent: undefined }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    if (step.depth > limit) return pathOf(step);
    const { value, depth } = step;
    // Pushed last to first, so that the first value found is the first in document order.
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], depth: depth + 1, key: i, parent: step });
    } else if (isRecord(value)) {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: value[keys[i]!], depth: depth + 1, key: keys[i]!, parent: step });
    }
  }
  return undefined;
}

function pathOf(step: Step): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Step | undefined = step; at?.parent; at = at.parent) path.push(at.key);
  return path.reverse();
}
