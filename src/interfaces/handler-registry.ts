import type { InterfaceName } from '../lib/spec-catalog.ts';
import type { HandlerMap } from '../server/handler-types.ts';

/** What handlers may depend on; grows as interfaces are implemented (stores, clock, ids...). */
export type HandlerDependencies = Record<string, never>;

/**
 * Handlers per interface, keyed by operationId. An operation without a handler answers 501 in its
 * interface's error shape; each interface's issue fills its map.
 */
export function createHandlers(_deps: HandlerDependencies): Record<InterfaceName, HandlerMap> {
  return {
    mapping: {},
    topology: {},
    snapshots: {},
    'client-registration': {},
    'rate-limit': {},
    'device-config': {},
    health: {},
    'access-session': {},
  };
}
