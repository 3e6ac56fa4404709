/** Values by name: scenario variables, captures, `--var`s, `runId`, `credentials.<name>.user`. */
export type Scope = Record<string, unknown>;

/** A scenario or data file names something that does not exist: reported, never thrown past the step. */
export class SetupError extends Error {
  override name = 'SetupError';
}

const WHOLE = /^\$\{([^}]+)\}$/;
const ANY = /\$\{([^}]+)\}/g;

/** A name's value: exact key first, then a dotted path through objects (`credentials.admin.user`). */
export function lookup(scope: Scope, name: string): unknown {
  if (name in scope) return scope[name];
  let node: unknown = scope;
  for (const part of name.split('.')) {
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[part] : undefined;
  }
  return node;
}

/**
 * Replaces `${name}` in every string of a value (deep; keys too). A string that is exactly one
 * `${name}` becomes the value itself, so numbers stay numbers.
 *
 * @example
 * interpolate({ limit: '${rateLimit}', token: 'Bearer ${token}' }, { rateLimit: 1000, token: 'abc' });
 * // { limit: 1000, token: 'Bearer abc' }
 */
export function interpolate(value: unknown, scope: Scope): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return required(scope, whole[1]!);
    return value.replace(ANY, (_m, name: string) => String(required(scope, name)));
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, scope));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [interpolate(k, scope) as string, interpolate(v, scope)]));
  }
  return value;
}

function required(scope: Scope, name: string): unknown {
  const value = lookup(scope, name);
  if (value === undefined) throw new SetupError(`unknown variable \${${name}}`);
  return value;
}
