// Small helpers the commands share: argument counts, Tcl's 1/0 answers, and what may go on the wire.
import type { Run } from './model.ts';
import { TclError } from './signals.ts';
import type { HeaderList, RuleRequest } from './types.ts';

/** Throws Tcl's `wrong # args` unless `args` has between `min` and `max` elements. */
export function arity(args: readonly string[], min: number, max: number, usage: string): void {
  if (args.length < min || args.length > max) throw new TclError(`wrong # args: should be "${usage}"`);
}

export const flag = (value: boolean): string => (value ? '1' : '0');

/** A command that takes no argument and reads something: `HTTP::method`, `IP::client_addr`... */
export const reader =
  (name: string, read: (run: Run) => string) =>
  (run: Run, args: string[]): string => {
    arity(args, 0, 0, name);
    return read(run);
  };

/** The request, in the events that have one. */
export function requestOf(run: Run, command: string): RuleRequest {
  if (run.event === 'CLIENT_ACCEPTED' || !run.request)
    throw new TclError(`${command} is not valid in ${run.event}: there is no HTTP request yet`);
  return run.request;
}

/** The header list a command reads and changes: the answer's in HTTP_RESPONSE, the request's otherwise. */
export function headersOf(run: Run, command: string): HeaderList {
  if (run.event === 'HTTP_RESPONSE') {
    if (!run.response) throw new TclError(`${command} has no answer to work on`);
    return run.response.headers;
  }
  return requestOf(run, command).headers;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Field values: visible characters, spaces, tabs and bytes past ASCII; never CR, LF or NUL.
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\uffff]*$/;
const URI = /^[\x21-\x7e]+$/;

/** A header a rule writes: a token for a name, and a value with no line break (no header injection). */
export function checkHeader(name: string, value: string): void {
  if (!TOKEN.test(name)) throw new TclError(`"${name.slice(0, 40)}" is not a valid header name`);
  if (!FIELD_VALUE.test(value)) throw new TclError(`the value of header "${name}" holds a character a header may not carry`);
}

/** A request target a rule writes: visible ASCII, no spaces or line breaks. */
export function checkTarget(target: string, what: string): void {
  if (!URI.test(target)) throw new TclError(`${what} must be visible ASCII characters with no spaces`);
}

/** Case-insensitive header lookups. */
export const sameName = (a: string, b: string): boolean => a.length === b.length && a.toLowerCase() === b.toLowerCase();
