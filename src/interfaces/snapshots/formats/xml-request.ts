// XML request bodies of interface C (the API's default format), read with fast-xml-parser, the project's XML
// library: checked well-formed first (its validator), then parsed with its limits (at most 100 nested
// elements, names that would reach an object's prototype refused). A document type declaration is refused
// outright: an update has no use for one, and its entities are how XML bombs expand.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { fail, ok, type PortolanError, type Result } from '../../../lib/errors.ts';

const parser = new XMLParser({
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Every value stays text, as written (the schema decides what it must be).
  parseTagValue: false,
  trimValues: false,
  // Character references (`&#233;`) as XML reads them; the five predefined entities always.
  htmlEntities: true,
});

const DOCTYPE = /<!DOCTYPE/i;
const TEXT = '#text';

const malformed = (message: string) => fail({ code: 'malformedBody' as const, message });

/**
 * The child elements of an XML body's root element `root` as an object of their text (an element that
 * holds elements is an object, one that repeats an array: the caller's schema refuses both). Refused
 * (malformedBody, 400) when the body is not well-formed XML, has a document type declaration, holds text
 * beside the elements, or its root is another element. Messages name a line and column, never the input.
 *
 * @example
 * xmlFields('<snapshot><description>After the upgrade</description></snapshot>', 'snapshot');
 * // { ok: true, value: { description: 'After the upgrade' } }
 */
export function xmlFields(text: string, root: string): Result<Record<string, unknown>, PortolanError & { code: 'malformedBody' }> {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (DOCTYPE.test(body)) return malformed('A document type declaration is not accepted in the request body.');
  const checked = XMLValidator.validate(body);
  if (checked !== true) {
    const { line, col } = checked.err;
    return malformed(`The request body is not well-formed XML (line ${line}${col ? `, column ${col}` : ''}).`);
  }
  let document: Record<string, unknown>;
  try {
    document = parser.parse(body) as Record<string, unknown>;
  } catch {
    // Too deeply nested, or an element named like a property of every object: never echoed.
    return malformed('The request body could not be read as XML (too deeply nested, or a reserved element name).');
  }
  const roots = Object.keys(document);
  const content = document[root];
  // A repeated root comes as an array.
  if (roots.length !== 1 || roots[0] !== root || Array.isArray(content))
    return malformed(`The XML body must have one root element, <${root}>.`);
  if (content === '') return ok({});
  if (typeof content !== 'object' || content === null)
    return malformed(`The XML body must have one root element, <${root}>, holding one element per field.`);
  const { [TEXT]: between, ...fields } = content as Record<string, unknown>;
  if (typeof between === 'string' && between.trim() !== '')
    return malformed(`The <${root}> element holds text outside its field elements.`);
  return ok(fields);
}
