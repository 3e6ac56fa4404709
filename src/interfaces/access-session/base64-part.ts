/**
 * Decoding one identity-token part the way the seed's jwt-parse agent does: padded with `==` when
 * its length mod 4 is 2, with `=` when it is 3, then base64-decoded. Node's decoder silently skips
 * characters outside the alphabet, so the part is checked first: a malformed part is an expected
 * failure, reported by position and reason and never by its content.
 */

export type PartName = 'header' | 'payload';

export type DecodedPart = { ok: true; text: string } | { ok: false; message: string };

// The base64url alphabet plus the standard one's `+` and `/` (both accepted, per the spec).
const ALPHABET = /[A-Za-z0-9_+/-]/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Pads a part per the seed's rule: `==` when its length mod 4 is 2, `=` when it is 3. */
export function padPart(part: string): string {
  const remainder = part.length % 4;
  return remainder === 2 ? `${part}==` : remainder === 3 ? `${part}=` : part;
}

/** A character for a message: itself when printable ASCII, else its code point. */
const show = (char: string) =>
  /^[!-~]$/.test(char) ? `'${char}'` : `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** Positions are 0-based indexes into the part, as JavaScript's own parsers report them. */
function findProblem(part: string): string | undefined {
  if (part.length % 4 === 1) return `length ${part.length} is 1 mod 4`;
  // A part that arrives padded already is accepted: trailing `=` only, at most two once padded.
  const padding = /=*$/.exec(part)![0].length;
  const body = part.length - padding;
  for (let i = 0; i < body; i++) {
    if (!ALPHABET.test(part[i]!)) return `invalid character ${show(String.fromCodePoint(part.codePointAt(i)!))} at position ${i}`;
  }
  if (padding > 0 && padPart(part).length - body > 2) return `too much padding at position ${body}`;
  return undefined;
}

/**
 * Pads and decodes one part to text; fails (as a value) on a length of 1 mod 4, a character outside
 * the alphabet, misplaced padding, or bytes that are not UTF-8.
 *
 * @example
 * decodePart('header', 'eyJhbGciOiJub25lIn0') // { ok: true, text: '{"alg":"none"}' }
 */
export function decodePart(name: PartName, part: string): DecodedPart {
  const problem = findProblem(part);
  if (problem) return { ok: false, message: `${name} part is not valid base64url: ${problem}` };
  try {
    return { ok: true, text: utf8.decode(Buffer.from(padPart(part), 'base64')) };
  } catch {
    return { ok: false, message: `${name} part is not valid UTF-8 once base64-decoded` };
  }
}
