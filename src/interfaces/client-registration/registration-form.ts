import { UNKNOWN_FIELD } from './error-shape.ts';

export type RegistrationForm = { username: string; password: string };

const FIELDS = ['username', 'password'] as const;

/**
 * Reads the registration form from the raw body, strictly: both fields present once each, no
 * other field, and each value valid percent-encoding (`+` is a space, as in every URL-encoded form).
 * The role app has already parsed and validated the body leniently; this pass catches what a lenient
 * parser lets through (bad escapes, repeated fields). Problems are the spec's sentences, never values or unknown names.
 */
export function readRegistrationForm(raw: Buffer | undefined): { ok: true; form: RegistrationForm } | { ok: false; problem: string } {
  const text = raw?.toString('utf8') ?? '';
  if (text === '') return { ok: false, problem: 'form fields username and password are required' };
  const values: Partial<Record<string, string>> = Object.create(null);
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const name = decode(rawName);
    if (name === undefined) return { ok: false, problem: 'malformed form body: invalid percent-encoding in a field name' };
    if (!(FIELDS as readonly string[]).includes(name)) return { ok: false, problem: UNKNOWN_FIELD };
    if (values[name] !== undefined) return { ok: false, problem: `form field ${name} is given more than once` };
    const value = decode(eq === -1 ? '' : pair.slice(eq + 1));
    if (value === undefined) return { ok: false, problem: `malformed form body: invalid percent-encoding in field ${name}` };
    values[name] = value;
  }
  const missing = FIELDS.filter((f) => values[f] === undefined);
  if (missing.length === 2) return { ok: false, problem: 'form fields username and password are required' };
  if (missing.length === 1) return { ok: false, problem: `form field ${missing[0]} is required` };
  return { ok: true, form: { username: values.username!, password: values.password! } };
}

function decode(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}
