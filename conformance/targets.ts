import { ROLE_NAMES } from '../src/lib/roles.ts';
import { INTERFACES } from '../src/lib/spec-catalog.ts';

/**
 * Where each operation is sent. Keys are role names (`gateway`, `device`, ...) or interface names
 * (`mapping`, `rate-limit`, ...); `*` is the URL for everything else. An interface key wins over a
 * role key, which wins over `*`.
 */
export type TargetMap = Readonly<Record<string, string>>;

/** `reference` / `prism`: start that target in this process instead of naming URLs. */
export type ParsedTargets = { reference: boolean; prism: boolean; map: TargetMap };

const KEYS = new Set<string>([...ROLE_NAMES, ...INTERFACES.map((i) => i.name)]);

/**
 * Reads `--target` values: `reference` (start the reference system in-process), `prism` (start the
 * Prism mocks), a bare URL (every interface), or `key=url` with a role or interface name as key.
 *
 * @example
 * parseTargets(['gateway=http://10.0.0.5:8080', 'mapping=http://10.0.0.6:8081']);
 */
export function parseTargets(values: readonly string[], option = '--target'): ParsedTargets {
  let reference = false;
  let prism = false;
  const map: Record<string, string> = {};
  for (const value of values) {
    if (value === 'reference') {
      reference = true;
      continue;
    }
    if (value === 'prism') {
      prism = true;
      continue;
    }
    const eq = value.indexOf('=');
    const [key, url] = eq > 0 && !/^https?:/.test(value) ? [value.slice(0, eq), value.slice(eq + 1)] : ['*', value];
    if (key !== '*' && !KEYS.has(key))
      throw new Error(
        `${option} ${key}=...: ${key} is neither a role (${ROLE_NAMES.join(', ')}) nor an interface (${INTERFACES.map((i) => i.name).join(', ')})`,
      );
    const shown = `${key === '*' ? '' : `${key}=`}${withoutCredentials(url)}`;
    if (!/^https?:\/\/[^\s/]+/.test(url)) throw new Error(`${option} ${shown}: expected an http(s) URL, 'reference', or key=url`);
    if (!URL.canParse(url)) throw new Error(`${option} ${shown}: not a valid URL`);
    if (map[key] !== undefined) throw new Error(`${option}: ${key === '*' ? 'the default URL' : key} is given twice`);
    map[key] = url.replace(/\/+$/, '');
  }
  if (reference && prism)
    throw new Error(
      `${option} reference and ${option} prism are two targets: ${option === '--target' ? 'use --compare for the second' : 'give one with --target'}`,
    );
  const started = reference ? 'reference' : prism ? 'prism' : undefined;
  if (started && Object.keys(map).length > 0) throw new Error(`${option} ${started} starts every role itself; don't mix it with URLs`);
  return { reference, prism, map };
}

/**
 * A URL (or a text holding URLs, e.g. an error message) as it may be printed: without the user and
 * password a target URL may carry (`http://u:pw@host:8080` -> `http://host:8080`), the rest unchanged.
 */
export function withoutCredentials(text: string): string {
  // Up to the last '@' before the path, query or fragment: where the WHATWG parser ends the userinfo too.
  return text.replace(/\b([a-z][a-z\d+.-]*:\/\/)[^\s/?#]*@/gi, '$1');
}

/** A target map as it may be printed: every URL without credentials. */
export function printableTargets(map: TargetMap): Record<string, string> {
  return Object.fromEntries(Object.entries(map).map(([key, url]) => [key, withoutCredentials(url)]));
}

/** The base URL an operation of `interfaceName` served on `role` is sent to; undefined when none is given. */
export function resolveTarget(map: TargetMap, interfaceName: string, role: string): string | undefined {
  return map[interfaceName] ?? map[role] ?? map['*'];
}

/** The roles of an operation that have a target, each with its URL, the same URL checked once. */
export function targetsOf(map: TargetMap, interfaceName: string, roles: readonly string[]): { role: string; url: string }[] {
  const seen = new Set<string>();
  const found: { role: string; url: string }[] = [];
  for (const role of roles) {
    const url = resolveTarget(map, interfaceName, role);
    if (url === undefined || seen.has(url)) continue;
    seen.add(url);
    found.push({ role, url });
  }
  return found;
}
