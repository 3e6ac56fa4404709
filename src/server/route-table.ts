import FindMyWay from 'find-my-way';
import type { HTTPMethod } from 'find-my-way';
import type { RuntimeOperation } from './interface-runtime.ts';

/**
 * An OpenAPI path template as a find-my-way route. A parameter followed by more text in the same
 * segment (`~{partition}~{name}`) gets a pattern that stops at that text's first character.
 */
export function toRoutePattern(template: string): string {
  return template.replace(/\{([^}]+)\}(.?)/g, (_match, name: string, next: string) => {
    if (next === '' || next === '/') return `:${name}${next}`;
    const stop = next.replace(/[\\^\]-]/g, '\\$&');
    return `:${name}(^[^${stop}/]+)${next}`;
  });
}

export type RouteMatch = { operation: RuntimeOperation; params: Record<string, string> };

/** A router compiled once for a role's operations: method + path -> operation. */
export function createRouteTable(operations: readonly RuntimeOperation[]) {
  const router = FindMyWay({ ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, caseSensitive: true });
  const methods = new Set<string>();
  for (const operation of operations) {
    const method = operation.method.toUpperCase() as HTTPMethod;
    methods.add(method);
    router.on(method, toRoutePattern(operation.path), () => undefined, { operation });
  }
  return {
    find(method: string, path: string): RouteMatch | undefined {
      if (!methods.has(method)) return undefined;
      const found = router.find(method as HTTPMethod, path);
      if (!found) return undefined;
      const { operation } = found.store as { operation: RuntimeOperation };
      return { operation, params: found.params as Record<string, string> };
    },
    /** Methods served at this path (for 405 and the Allow header); [] when the path is unknown. */
    allowedMethods(path: string): string[] {
      return [...methods].filter((m) => router.find(m as HTTPMethod, path));
    },
  };
}

export type RouteTable = ReturnType<typeof createRouteTable>;
