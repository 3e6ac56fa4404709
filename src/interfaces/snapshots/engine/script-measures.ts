/**
 * What the `scripts` collection says of a script's text: its size, its lines, whether it holds only
 * blank lines and comments, and the text itself (matched by rules, never shown).
 *
 * @example scriptMeasures('# nothing\n') // { bytes: 10, lines: 1, blank: true, text: '# nothing\n' }
 */
export function scriptMeasures(text: string) {
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  const blank = lines.every((line) => /^\s*(#.*)?$/.test(line));
  return { bytes: Buffer.byteLength(text), lines: lines.length, blank, text };
}
