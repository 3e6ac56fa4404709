import { clip, isRecord } from './model.ts';

/** One JSON Patch operation (RFC 6902), as the schema `PatchOperation` admits it. */
export type PatchOperation = { op: string; path: string; from?: string; value?: unknown };

export type PatchOutcome = { ok: true; document: unknown } | { ok: false; message: string };

/** Levels a pointer may name (the declaration's own nesting bound). */
export const MAX_POINTER_DEPTH = 64;
/** Values a patch may copy in all (`copy` doubles a subtree each time: 256 of them would never end). */
export const MAX_COPIED_VALUES = 200_000;

const ARRAY_INDEX = /^(0|[1-9][0-9]{0,8})$/;
const invalid = (message: string): PatchOutcome => ({ ok: false, message: `InvalidPatchOperationError: ${message}` });

/** The reference tokens of a JSON pointer (RFC 6901), or undefined when it is not one. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/') || /~[^01]|~$/.test(pointer)) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** Own members only; written as data properties, so `__proto__` is a member like any other and never a prototype. */
const hasMember = (container: unknown, token: string): boolean =>
  Array.isArray(container)
    ? ARRAY_INDEX.test(token) && Number(token) < container.length
    : isRecord(container) && Object.hasOwn(container, token);
const setMember = (record: Record<string, unknown>, token: string, value: unknown) =>
  Object.defineProperty(record, token, { value, enumerable: true, writable: true, configurable: true });

/** The container of the last token, walking own members only; undefined when a step does not exist. */
function parentOf(document: unknown, tokens: readonly string[]): unknown {
  let node = document;
  for (const token of tokens.slice(0, -1)) {
    if (!hasMember(node, token)) return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return Array.isArray(node) || isRecord(node) ? node : undefined;
}

/** How many values a JSON value holds (itself included), counted iteratively up to `limit`. */
function countValues(value: unknown, limit: number): number {
  let count = 0;
  const stack = [value];
  while (stack.length > 0 && count <= limit) {
    const node = stack.pop();
    count++;
    // One by one: spreading a long list into push's arguments overflows the call stack (about 130 000 values).
    if (Array.isArray(node)) for (const item of node) stack.push(item);
    else if (isRecord(node)) for (const item of Object.values(node)) stack.push(item);
  }
  return count;
}

/**
 * Applies a JSON Patch (RFC 6902) to a document the caller owns (parsed from JSON: it is changed in
 * place): `add`, `remove`, `replace`, `move` and `copy`, in order; the first that cannot apply fails the
 * whole patch with a message naming its path (at most 64 characters of it). `test` is not supported (the
 * real extension refuses it too). Pointers deeper than 64 levels fail; copies past 200 000 values in
 * all fail (a copy can double the document). Never follows or sets a prototype: `__proto__` and
 * `constructor` are members like any other.
 *
 * @example
 * applyPatch({ T: { class: 'Tenant' } }, [{ op: 'add', path: '/T/A', value: { class: 'Application' } }]);
 * // { ok: true, document: { T: { class: 'Tenant', A: { class: 'Application' } } } }
 */
export function applyPatch(document: unknown, operations: readonly PatchOperation[]): PatchOutcome {
  let root = document;
  let copied = 0;
  const get = (tokens: readonly string[]) => {
    if (tokens.length === 0) return { found: true, value: root };
    const parent = parentOf(root, tokens);
    const last = tokens.at(-1)!;
    return hasMember(parent, last) ? { found: true, value: (parent as Record<string, unknown>)[last] } : { found: false, value: undefined };
  };
  const add = (tokens: readonly string[], value: unknown): boolean => {
    if (tokens.length === 0) {
      root = value;
      return true;
    }
    const parent = parentOf(root, tokens);
    const last = tokens.at(-1)!;
    if (Array.isArray(parent)) {
      if (last === '-') parent.push(value);
      else if (ARRAY_INDEX.test(last) && Number(last) <= parent.length) parent.splice(Number(last), 0, value);
      else return false;
      return true;
    }
    if (!isRecord(parent)) return false;
    setMember(parent, last, value);
    return true;
  };
  const remove = (tokens: readonly string[]): boolean => {
    const parent = parentOf(root, tokens);
    const last = tokens.at(-1);
    if (last === undefined || !hasMember(parent, last)) return false;
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete (parent as Record<string, unknown>)[last];
    return true;
  };

  for (const [index, operation] of operations.entries()) {
    const path = parsePointer(operation.path);
    const from = operation.from === undefined ? undefined : parsePointer(operation.from);
    const where = `/${index}`;
    if (!path) return invalid(`${where}: path ${clip(JSON.stringify(operation.path))} is not a JSON pointer`);
    if (operation.from !== undefined && !from)
      return invalid(`${where}: from ${clip(JSON.stringify(operation.from))} is not a JSON pointer`);
    if (path.length > MAX_POINTER_DEPTH || (from?.length ?? 0) > MAX_POINTER_DEPTH)
      return invalid(`${where}: a pointer deeper than ${MAX_POINTER_DEPTH} levels`);
    const missing = (pointer: string) => invalid(`path ${clip(pointer)} does not exist`);
    switch (operation.op) {
      case 'add':
        if (!add(path, operation.value)) return missing(operation.path);
        break;
      case 'remove':
        if (!remove(path)) return missing(operation.path);
        break;
      case 'replace': {
        if (!get(path).found) return missing(operation.path);
        if (path.length > 0) remove(path);
        add(path, operation.value);
        break;
      }
      case 'move':
      case 'copy': {
        if (!from) return invalid(`${where}: ${operation.op} needs from`);
        const source = get(from);
        if (!source.found) return missing(operation.from!);
        if (operation.op === 'move') {
          if (path.length > from.length && from.every((token, i) => token === path[i]))
            return invalid(`${where}: cannot move ${clip(operation.from!)} into itself`);
          remove(from);
          if (!add(path, source.value)) return missing(operation.path);
        } else {
          copied += countValues(source.value, MAX_COPIED_VALUES);
          if (copied > MAX_COPIED_VALUES) return invalid(`${where}: the patch copies more than ${MAX_COPIED_VALUES} values`);
          if (!add(path, structuredClone(source.value))) return missing(operation.path);
        }
        break;
      }
      default:
        return invalid(`${where}: op ${clip(JSON.stringify(operation.op))} is not supported`);
    }
  }
  return { ok: true, document: root };
}
