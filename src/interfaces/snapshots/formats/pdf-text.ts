// Text for the PDF's standard fonts. The 14 standard fonts need no font file, but they only hold the
// Windows-1252 repertoire: PDFKit writes any other character as a code the font does not have, which
// shows as garbage. So every value goes through `pdfText` first.

/** The characters of Windows-1252 at 0x80-0x9F (euro sign, curly quotes, dashes, ...), which PDFKit maps. */
const CP1252_EXTRAS = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/** Spaces and line breaks of other scripts that are better shown as a plain space. */
const SPACE_LIKE = /[\t\v\f\u0085\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/g;

/**
 * `value` as the standard fonts can show it: NFC-composed, control characters and exotic spaces made
 * spaces (line feeds kept when `multiline`), and every character outside Windows-1252 replaced by `?`.
 *
 * @example
 * pdfText('Größe — 10 %'); // 'Größe — 10 %'
 * pdfText('日本'); // '??'
 */
export function pdfText(value: string, { multiline = false } = {}): string {
  let text = '';
  for (const char of value.normalize('NFC').replace(/\r\n?/g, '\n').replace(SPACE_LIKE, ' ')) {
    const code = char.codePointAt(0)!;
    if (char === '\n') text += multiline ? '\n' : ' ';
    else if (code < 0x20 || code === 0x7f) text += ' ';
    else if (code < 0x7f || (code >= 0xa0 && code <= 0xff) || CP1252_EXTRAS.has(char)) text += char;
    else text += '?';
  }
  return text;
}

/** Only web links become clickable: a rule's solution could name any scheme. */
export const isWebLink = (url: string): boolean => /^https?:\/\/[^\s]+$/i.test(url);
