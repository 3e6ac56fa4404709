// Strict XML reading for the format tests. saxes checks well-formedness to the letter of XML 1.0 (it
// refuses characters outside the Char production, `]]>` in text, bad references, a second root);
// @xmldom/xmldom then builds the DOM that xpath queries (it alone is lenient about characters).
import { DOMParser, type Document, type Element, type Node } from '@xmldom/xmldom';
import { SaxesParser } from 'saxes';
import xpath from 'xpath';

/** The document, or an Error naming the first well-formedness problem. */
export function parseStrict(xml: string): Document {
  if (!xml.isWellFormed()) throw new Error('not well-formed: the text holds a lone surrogate');
  const sax = new SaxesParser({ position: true });
  const problems: string[] = [];
  sax.on('error', (error) => problems.push(error.message));
  sax.write(xml).close();
  if (problems.length > 0) throw new Error(`not well-formed: ${problems.join('; ')}`);
  // saxes has judged well-formedness; xmldom's warnings (a U+FFFD "may be an encoding issue") are not errors.
  const fail = (level: string, message: string) => {
    if (level !== 'warning') throw new Error(`not well-formed (${level}): ${message}`);
  };
  return new DOMParser({ onError: fail }).parseFromString(xml, 'text/xml');
}

/** The string values of what `expression` selects (attributes, elements' text). */
export function select(doc: Document, expression: string): string[] {
  const found = xpath.select(expression, doc as unknown as globalThis.Node);
  const nodes = Array.isArray(found) ? found : [found];
  return nodes.map((node) =>
    typeof node === 'object' && node !== null ? ((node as { textContent: string | null }).textContent ?? '') : String(node),
  );
}

/** One string value, or an Error when `expression` selects not exactly one node. */
export function selectOne(doc: Document, expression: string): string {
  const values = select(doc, expression);
  if (values.length !== 1) throw new Error(`${expression} selects ${values.length} nodes, not 1`);
  return values[0]!;
}

export type Shape =
  | { name: string; attributes: [string, string][]; children: Shape[] }
  | { name: string; attributes: [string, string][]; text: string };

/**
 * The structure of an element for comparing two documents: names, attributes (sorted, their order means
 * nothing in XML), child elements in order, and the text of leaf elements. Whitespace between elements
 * (the spec's examples are indented) is not part of it.
 */
export function shape(element: Element): Shape {
  const attributes: [string, string][] = [];
  for (let i = 0; i < element.attributes.length; i++) attributes.push([element.attributes[i]!.name, element.attributes[i]!.value]);
  attributes.sort(([a], [b]) => a.localeCompare(b));
  const children: Element[] = [];
  let text = '';
  for (let node: Node | null = element.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === node.ELEMENT_NODE) children.push(node as Element);
    else if (node.nodeType === node.TEXT_NODE) text += node.nodeValue ?? '';
  }
  if (children.length === 0) return { name: element.tagName, attributes, text };
  if (text.trim() !== '') throw new Error(`mixed content in <${element.tagName}>`);
  return { name: element.tagName, attributes, children: children.map(shape) };
}

/** The element names of a document in document order, each with its depth: a readable outline. */
export function outline(element: Element, depth = 0): string[] {
  const lines = [
    `${'  '.repeat(depth)}${element.tagName}${[...Array(element.attributes.length).keys()].map((i) => ` @${element.attributes[i]!.name}`).join('')}`,
  ];
  for (let node: Node | null = element.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === node.ELEMENT_NODE) lines.push(...outline(node as Element, depth + 1));
  }
  return lines;
}
