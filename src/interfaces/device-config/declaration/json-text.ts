/**
 * JSON text put together from the texts of its parts, so that a declaration of megabytes is written
 * into an answer or a row without being walked or serialised again on the event loop: joining
 * strings costs a copy, JSON.stringify of the objects costs a walk of every value.
 */

/** `{"<key>":<text>,...}` from members whose values are already JSON text. */
export function objectText(members: readonly (readonly [key: string, text: string])[]): string {
  return `{${members.map(([key, text]) => `${JSON.stringify(key)}:${text}`).join(',')}}`;
}

/** The members of a small object as JSON texts (the parts of an answer that are not a declaration). */
export const membersOf = (value: Readonly<Record<string, unknown>>): [string, string][] =>
  Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .map(([key, v]) => [key, JSON.stringify(v)]);
