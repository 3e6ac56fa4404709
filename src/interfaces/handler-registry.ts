import type { InterfaceName } from '../lib/spec-catalog.ts';
import type { HandlerMap } from '../server/handler-types.ts';
import { createHealthHandlers, type HealthDependencies } from './health/handlers.ts';
import { createMappingHandlers, type MappingDependencies } from './mapping/handlers.ts';

/** What the handlers depend on, built once in the composition root. */
export type HandlerDependencies = {
  mapping: MappingDependencies;
  health: HealthDependencies;
};

/**
 * Handlers per interface, keyed by operationId. An operation without a handler answers 501 in its
 * interface's error shape; each interface's issue fills its map.
 */
export function createHandlers(deps: HandlerDependencies): Record<InterfaceName, HandlerMap> {
  return {
    mapping: createMappingHandlers(deps.mapping),
    health: createHealthHandlers(deps.health),
    topology: {},
    snapshots: {},
    'client-registration': {},
    'rate-limit': {},
    'device-config': {},
    'access-session': {},
  };
}
