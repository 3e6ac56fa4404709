// Regular expressions taken from rules (the snapshot engine's rule files, `matches_regex` in a device's iRules)
// run on JavaScript's backtracking engine against what others send, so a pattern is accepted only when it
// cannot take exponential time.

/** The longest regular expression a rule may carry. */
export const MAX_REGEX_LENGTH = 512;

/**
 * Compiles a regular expression taken from a rule file, or says why it is refused: it must compile,
 * be at most MAX_REGEX_LENGTH long, use no back-references, and repeat no group that itself holds a
 * quantifier or an alternation (`(a+)+`, `(a|a)*`): those are what makes a backtracking engine take
 * exponential time. Polynomial cases (`a*a*b`) remain possible: the caller bounds the subject's length
 * (the snapshot engine matches one line of bounded length at a time; the data plane, a request's bounded head).
 *
 * @example compileRegex('^\\s*log\\s', 'i') // RegExp
 */
export function compileRegex(source: string, flags = ''): RegExp | string {
  if (source.length === 0) return 'must not be empty';
  if (source.length > MAX_REGEX_LENGTH) return `is longer than ${MAX_REGEX_LENGTH} characters`;
  if (!/^i?$/.test(flags)) return `flags must be "" or "i", not ${JSON.stringify(flags)}`;
  let regex: RegExp;
  try {
    regex = new RegExp(source, flags);
  } catch (error) {
    return `is not a valid regular expression (${(error as Error).message.replace(/^Invalid regular expression: /, '')})`;
  }
  return backtrackingRisk(source) ?? regex;
}

type Frame = { quantified: boolean; alternation: boolean };

/** Why `source` (a valid regular expression) could backtrack badly, or undefined. */
function backtrackingRisk(source: string): string | undefined {
  const stack: Frame[] = [{ quantified: false, alternation: false }];
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    const top = stack.at(-1)!;
    if (c === '\\') {
      if (/[1-9k]/.test(source[i + 1] ?? '')) return 'uses a back-reference';
      i++;
    } else if (c === '[') {
      for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
    } else if (c === '(') {
      // (?:  (?=  (?!  (?<=  (?<!  (?<name>  (?i:  ... : skip the group's prefix.
      if (source[i + 1] === '?') {
        i += 2;
        while (i < source.length && !':=!>'.includes(source[i]!)) i++;
      }
      stack.push({ quantified: false, alternation: false });
    } else if (c === ')') {
      const group = stack.pop()!;
      const quantifier = quantifierAt(source, i + 1);
      if (quantifier === 'repeats' && (group.quantified || group.alternation)) {
        return 'repeats a group that holds a quantifier or an alternation (nested repetition can take exponential time)';
      }
      if (group.quantified || quantifier) stack.at(-1)!.quantified = true;
    } else if (c === '|') {
      top.alternation = true;
    } else if (quantifierAt(source, i)) {
      top.quantified = true;
    }
  }
  return undefined;
}

/** 'repeats' for *, +, {n,} and {n,m} with m > 1; 'optional' for ? and {0,1}; undefined when no quantifier starts at i. */
function quantifierAt(source: string, i: number): 'repeats' | 'optional' | undefined {
  const c = source[i];
  if (c === '*' || c === '+') return 'repeats';
  if (c === '?') return 'optional';
  const braces = c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i)) : null;
  if (!braces) return undefined;
  const max = braces[2] === undefined ? Number(braces[1]) : braces[3] === '' ? Infinity : Number(braces[3]);
  return max > 1 ? 'repeats' : 'optional';
}
