import { createHash } from 'node:crypto';

/** Longest file name the snapshot engine (and most file systems) take for one path component. */
const MAX_NAME = 255;
const SUFFIX = '.tcl';

const isPlain = (ch: string, capitals: boolean) => /^[a-z0-9._-]$/.test(ch) || (!capitals && /^[A-Z]$/.test(ch));

/** `%XX` for each UTF-8 byte of every character but letters, digits, `.`, `_` and `-` (and capitals too when asked). */
function encode(text: string, capitals: boolean): string {
  let out = '';
  for (const ch of text) {
    if (isPlain(ch, capitals)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Cuts an encoded text to `length` characters without splitting a `%XX`. */
const cut = (encoded: string, length: number) => encoded.slice(0, length).replace(/%[0-9A-F]?$/, '');

/**
 * The file name of each script object in a snapshot, `<partition>~<name>.tcl`, such that every name
 * the device accepts (anything but `~` and `/`) gives a file the snapshot engine takes and no two
 * collide even where file names are compared case-folded: other characters become `%XX`, objects whose
 * names differ only in case are written with their capitals as `%XX`, and a name past 255 characters is
 * cut and ends in a hash of the object's full path. Keyed by `partition` and `name` as given.
 *
 * @example scriptFileNames([{ partition: 'Common', name: 'A' }, { partition: 'Common', name: 'a' }, { partition: 'Common', name: 'x y' }])
 * // ['Common~%41.tcl', 'Common~a.tcl', 'Common~x%20y.tcl']
 */
export function scriptFileNames(scripts: readonly { partition: string; name: string }[]): string[] {
  const plain = scripts.map((s) => `${encode(s.partition, false)}~${encode(s.name, false)}`);
  const groups = new Map<string, number>();
  for (const base of plain) groups.set(base.toLowerCase(), (groups.get(base.toLowerCase()) ?? 0) + 1);
  const taken = new Set<string>();
  return scripts.map((script, i) => {
    const collides = groups.get(plain[i]!.toLowerCase())! > 1;
    // Only the name's capitals are encoded: a partition is shared, and the same partition text collides with itself.
    let base = collides ? `${encode(script.partition, false)}~${encode(script.name, true)}` : plain[i]!;
    if (base.length + SUFFIX.length > MAX_NAME || taken.has(base.toLowerCase())) {
      const hash = `-${createHash('sha256').update(`${script.partition}\u0000${script.name}`).digest('hex').slice(0, 16)}`;
      const partition = cut(encode(script.partition, false), 64);
      base = `${partition}~${cut(base.slice(base.indexOf('~') + 1), MAX_NAME - SUFFIX.length - hash.length - partition.length - 1)}${hash}`;
    }
    taken.add(base.toLowerCase());
    return `${base}${SUFFIX}`;
  });
}
