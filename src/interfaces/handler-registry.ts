import type { InterfaceName } from '../lib/spec-catalog.ts';
import type { HandlerMap } from '../server/handler-types.ts';
import { createAccessSessionHandlers, type AccessSessionDependencies } from './access-session/handlers.ts';
import { createClientRegistrationHandlers, type ClientRegistrationDependencies } from './client-registration/handlers.ts';
import { createDeviceConfigHandlers, type DeviceConfigDependencies } from './device-config/handlers.ts';
import { createHealthHandlers, type HealthDependencies } from './health/handlers.ts';
import { createMappingHandlers, type MappingDependencies } from './mapping/handlers.ts';
import { createRateLimitHandlers, type RateLimitDependencies } from './rate-limit/handlers.ts';

/** What the handlers depend on, built once in the composition root. */
export type HandlerDependencies = {
  mapping: MappingDependencies;
  health: HealthDependencies;
  deviceConfig: DeviceConfigDependencies;
  clientRegistration: ClientRegistrationDependencies;
  accessSession: AccessSessionDependencies;
  rateLimit: RateLimitDependencies;
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
    'client-registration': createClientRegistrationHandlers(deps.clientRegistration),
    'rate-limit': createRateLimitHandlers(deps.rateLimit),
    'device-config': createDeviceConfigHandlers(deps.deviceConfig),
    'access-session': createAccessSessionHandlers(deps.accessSession),
  };
}
