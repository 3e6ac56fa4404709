// Which port each mocked role listens on: role port + 1000 + `--port-offset`, or the role's
// PORTOLAN_<ROLE>_PORT setting (the one `portolan start` reads) when the environment sets it.
import { port as portSchema, portSettingOf } from '../src/lib/config.ts';
import { ROLE_DEFINITIONS, type RoleName } from '../src/lib/roles.ts';
import type { Result } from '../src/lib/errors.ts';
import { MOCK_PORT_SHIFT } from './prism-plan.ts';

/** A role's port and what to change to move it. */
export type MockPort = { port: number; from: 'setting' | 'offset'; setting: string };

export { portSettingOf } from '../src/lib/config.ts';

/**
 * The port of each role: its PORTOLAN_<ROLE>_PORT from `env` when set (0 picks a free port), else role
 * port + 1000 + `offset`. An unusable value is one line naming the setting or flag to change.
 *
 * @example
 * resolveMockPorts(['mapping'], -1500, {}) // { ok: true, value: { mapping: { port: 7581, from: 'offset', ... } } }
 */
export function resolveMockPorts(
  roles: readonly RoleName[],
  offset: number,
  env: Record<string, string | undefined>,
): Result<Record<RoleName, MockPort>, string> {
  const ports: Partial<Record<RoleName, MockPort>> = {};
  for (const role of roles) {
    const setting = portSettingOf(role);
    const text = env[setting];
    if (text !== undefined && text !== '') {
      const value = Number(text);
      if (!/^\d+$/.test(text.trim()) || value < portSchema.minimum || value > portSchema.maximum) {
        return {
          ok: false,
          error: `${setting} must be a port number from ${portSchema.minimum} to ${portSchema.maximum} (0 picks a free port), got '${text.slice(0, 20)}'.`,
        };
      }
      ports[role] = { port: value, from: 'setting', setting };
      continue;
    }
    const base = ROLE_DEFINITIONS[role].defaultPort + MOCK_PORT_SHIFT;
    const value = base + offset;
    if (value < 1 || value > portSchema.maximum) {
      return {
        ok: false,
        error: `The ${role} mock's port ${base} ${offset < 0 ? '-' : '+'} ${Math.abs(offset)} = ${value} is outside 1..${portSchema.maximum}: change --port-offset, or set ${setting}.`,
      };
    }
    ports[role] = { port: value, from: 'offset', setting };
  }
  return { ok: true, value: ports as Record<RoleName, MockPort> };
}
