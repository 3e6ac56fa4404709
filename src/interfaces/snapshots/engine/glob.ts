/** A file pattern of a rule: a relative POSIX path where `*` matches within one component and `**` across them. */
export type Glob = { readonly source: string; readonly regex: RegExp };

const GLOB_FORM = /^(?:[A-Za-z0-9._~*@+=-]+\/)*[A-Za-z0-9._~*@+=-]+$/;

/**
 * Compiles a rule's file pattern, or says why it is not one.
 *
 * @example compileGlob('logs/*.log') // matches logs/ltm.log, not logs/old/ltm.log
 */
export function compileGlob(source: string): Glob | string {
  if (!GLOB_FORM.test(source) || source.split('/').some((part) => part === '.' || part === '..')) {
    return 'must be a relative path of letters, digits and ._~@+=- with * wildcards';
  }
  const body = source
    .split(/(\*\*|\*)/)
    .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+]/g, '\\$&')))
    .join('');
  return { source, regex: new RegExp(`^${body}$`) };
}
