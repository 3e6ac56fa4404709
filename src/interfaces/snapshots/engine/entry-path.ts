/** What an entry name becomes once checked: the relative POSIX path it is written to, or why it is refused. */
export type EntryPath = { ok: true; path: string; parts: readonly string[] } | { ok: false; reason: string };

const CONTROL = /[\u0000-\u001f\u007f]/;
const DRIVE = /^[A-Za-z]:/;
const MAX_COMPONENT = 255;

/**
 * Checks a tar entry's name (after pax and GNU long-name headers) before anything is written, and
 * normalises it: `./` and empty components dropped, a trailing `/` allowed. Refuses rather than
 * repairs: an absolute name, a `..` component anywhere (even one that would stay inside), a backslash
 * or a drive letter (a Windows path), control characters, and names that are too long or too deep.
 * The empty result (`./`) is the archive's root.
 *
 * @example checkEntryPath('./config/db-variables.json', 16, 1024) // { ok: true, path: 'config/db-variables.json', ... }
 */
export function checkEntryPath(name: string, maxDepth: number, maxLength: number): EntryPath {
  if (name.length === 0) return { ok: false, reason: 'has an empty name' };
  if (name.length > maxLength) return { ok: false, reason: `has a name longer than ${maxLength} characters` };
  if (CONTROL.test(name)) return { ok: false, reason: 'has control characters in its name' };
  if (name.includes('\\')) return { ok: false, reason: 'has a backslash in its name (a Windows path)' };
  if (DRIVE.test(name)) return { ok: false, reason: 'starts with a drive letter (a Windows absolute path)' };
  if (name.startsWith('/')) return { ok: false, reason: 'has an absolute path' };
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) return { ok: false, reason: "has a '..' component" };
  if (parts.some((part) => part.length > MAX_COMPONENT))
    return { ok: false, reason: `has a path component longer than ${MAX_COMPONENT} characters` };
  if (parts.length > maxDepth) return { ok: false, reason: `is nested ${parts.length} levels deep (at most ${maxDepth})` };
  return { ok: true, path: parts.join('/'), parts };
}

/** An entry name as a message may quote it: JSON-quoted (control characters escaped), at most 80 characters. */
export const quoteName = (name: string): string => JSON.stringify(name.length > 80 ? `${name.slice(0, 77)}...` : name);
