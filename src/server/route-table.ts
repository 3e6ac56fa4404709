import FindMyWay from 'find-my-way';
import type { HTTPMethod } from 'find-my-way';
import type { OperationEntry } from '../lib/spec-catalog.ts';
import type { RuntimeOperation } from './interface-runtime.ts';

/**
 * An OpenAPI path template as a find-my-way route. A parameter followed by more text in the same
 * segment (`~{partition}~{name}`) gets a pattern that stops at that text's first character. The
 * pattern sees the decoded value, so an encoded slash (`%2F`) stays inside the parameter and the
 * spec's own parameter schema answers it (400), as for any other character.
 */
export function toRoutePattern(template: string): string {
  return template.replace(/\{([^}]+)\}(.?)/g, (_match, name: string, next: string) => {
    if (next === '' || next === '/') return `:${name}${next}`;
    const stop = next.replace(/[\\^\]-]/g, '\\$&');
    return `:${name}(^[^${stop}]+)${next}`;
  });
}

/** A `maxParamLength` no path parameter reaches: a request line is cut at Node's 16 KiB header limit first. */
export const UNLIMITED_PARAM_LENGTH = 16 * 1024;

export type RouteMatch<T = RuntimeOperation> = { operation: T; params: Record<string, string> };

/**
 * A router compiled once for a role's operations: method + path -> operation. Generic so the mocks
 * can route plain spec entries (no compiled validators) exactly as the server does.
 * `maxParamLength` (find-my-way's default: 100) is the longest path parameter that still matches:
 * the mocks raise it so an over-long parameter reaches the code that validates it against the spec.
 */
export function createRouteTable<T extends Pick<OperationEntry, 'method' | 'path'> = RuntimeOperation>(
  operations: readonly T[],
  options: { maxParamLength?: number } = {},
) {
  const router = FindMyWay({
    ignoreTrailingSlash: false,
    ignoreDuplicateSlashes: false,
    caseSensitive: true,
    ...(options.maxParamLength ? { maxParamLength: options.maxParamLength } : {}),
  });
  const methods = new Set<string>();
  for (const operation of operations) {
    const method = operation.method.toUpperCase() as HTTPMethod;
    methods.add(method);
    router.on(method, toRoutePattern(operation.path), () => undefined, { operation });
  }
  return {
    find(method: string, path: string): RouteMatch<T> | undefined {
      if (!methods.has(method)) return undefined;
      const found = router.find(method as HTTPMethod, path);
      if (!found) return undefined;
      const { operation } = found.store as { operation: T };
      return { operation, params: found.params as Record<string, string> };
    },
    /** Methods served at this path (for 405 and the Allow header); [] when the path is unknown. */
    allowedMethods(path: string): string[] {
      return [...methods].filter((m) => router.find(m as HTTPMethod, path));
    },
  };
}

export type RouteTable<T extends Pick<OperationEntry, 'method' | 'path'> = RuntimeOperation> = ReturnType<typeof createRouteTable<T>>;
