import { isRecord } from './model.ts';

/**
 * The path of the first value nested deeper than `limit` levels below `root` (root itself is level
 * 0), or undefined. Iterative: a hostile body nested 10 000 levels deep cannot overflow the stack
 * here, and once refused no recursive code (ajv, copies, comparisons) ever sees it.
 */
export function findTooDeep(root: unknown, limit: number): (string | number)[] | undefined {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (path.length > limit) return path;
    const children: [string | number, unknown][] = Array.isArray(value) ? [...value.entries()] : isRecord(value) ? Object.entries(value) : [];
    // Pushed last to first, so that the first value found is the first in document order.
    for (let i = children.length - 1; i >= 0; i--) stack.push({ value: children[i]![1], path: [...path, children[i]![0]] });
  }
  return undefined;
}
