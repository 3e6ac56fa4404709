// Finding a text in a text with a bounded cost. V8's indexOf slows to the product of the lengths for some
// long needles (a needle of 40 000 characters in 450 000 took seconds), and lastIndexOf does for any: a
// needle past SHORT is searched with Knuth-Morris-Pratt instead, linear in both lengths.
import type { Run } from './model.ts';

const SHORT = 32;

/** Counts a search against the run's steps: both lengths, and for a short needle its length times the haystack's. */
export function chargeSearch(run: Run, haystack: string, needle: string): void {
  const product = needle.length <= SHORT ? (haystack.length * needle.length) >> 12 : 0;
  run.step(1 + ((haystack.length + needle.length) >> 10) + product);
}

/** The failure function of KMP: for each prefix, the length of its longest proper border. */
function borders(needle: string): Int32Array {
  const table = new Int32Array(needle.length);
  for (let i = 1, k = 0; i < needle.length; i++) {
    while (k > 0 && needle[i] !== needle[k]) k = table[k - 1]!;
    if (needle[i] === needle[k]) k++;
    table[i] = k;
  }
  return table;
}

/** Each start of `needle` in `haystack` from `from` on, in order, until `stop` says so. */
function each(haystack: string, needle: string, from: number, stop: (start: number) => boolean): void {
  const table = borders(needle);
  for (let i = from, k = 0; i < haystack.length; i++) {
    while (k > 0 && haystack[i] !== needle[k]) k = table[k - 1]!;
    if (haystack[i] === needle[k]) k++;
    if (k === needle.length) {
      if (stop(i - k + 1)) return;
      k = table[k - 1]!;
    }
  }
}

/** `haystack.indexOf(needle, from)`, linear for a long needle. */
export function findFirst(haystack: string, needle: string, from = 0): number {
  if (needle.length <= SHORT) return haystack.indexOf(needle, from);
  let found = -1;
  each(haystack, needle, Math.max(0, from), (start) => {
    found = start;
    return true;
  });
  return found;
}

/** `haystack.lastIndexOf(needle, last)`, linear for a long needle. */
export function findLast(haystack: string, needle: string, last = haystack.length): number {
  if (needle.length <= SHORT) return haystack.lastIndexOf(needle, last);
  let found = -1;
  each(haystack, needle, 0, (start) => {
    if (start > last) return true;
    found = start;
    return false;
  });
  return found;
}
