// Reading a declarative deployment (an ADC declaration) as plain JSON, leniently: what the device writes as
// its own configuration files (device-config/tmsh-config.ts) and what the snapshot engine reads back from a
// snapshot's declarations (snapshots/engine/declaration-facts.ts, tmsh/config-facts.ts) read alike.

export type Json = Record<string, unknown>;

export const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Own members of one class (a member named `constructor` never finds Object.prototype's). */
export const ofClass = (parent: Json, test: (cls: string) => boolean): [string, Json][] =>
  Object.entries(parent).filter(
    (entry): entry is [string, Json] => isRecord(entry[1]) && typeof entry[1].class === 'string' && test(entry[1].class),
  );

/** The strings of a list (anything else: none). */
export const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

export const numberOr = (value: unknown, fallback: number) => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);

/** A reference to another object: a name, `{use: name}` or `{bigip: path}`; '' when it is none of these. */
export const reference = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : isRecord(value) && typeof (value.use ?? value.bigip) === 'string'
      ? String(value.use ?? value.bigip)
      : '';

/** The device's monitor defaults (the service description: interval 5 s, timeout 16 s). */
export const MONITOR_DEFAULTS = { interval: 5, timeout: 16 } as const;

/** A service's port when its declaration names none. */
export const DEFAULT_PORTS: Readonly<Record<string, number>> = { Service_HTTP: 80, Service_HTTPS: 443 };
