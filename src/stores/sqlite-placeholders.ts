/**
 * Rewrites PostgreSQL-style parameters `$1, $2, ...` to SQLite's numbered `?1, ?2, ...`, so stores
 * write one SQL text for both engines. SQLite would read `$1` as a *named* parameter called "$1";
 * `?N` keeps the positional meaning (and a repeated `$1` still binds the first value).
 * String literals, quoted identifiers and comments are copied untouched.
 *
 * @example
 * toSqlitePlaceholders("SELECT * FROM t WHERE a = $1 AND b = '$2'") // "SELECT * FROM t WHERE a = ?1 AND b = '$2'"
 */
export function toSqlitePlaceholders(sql: string): string {
  if (!sql.includes('$')) return sql;
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const skipTo = endOfQuotedOrComment(sql, i);
    if (skipTo > i) {
      out += sql.slice(i, skipTo);
      i = skipTo;
    } else if (c === '$' && isDigit(sql[i + 1]) && !isWordChar(sql[i - 1])) {
      let j = i + 1;
      while (isDigit(sql[j])) j++;
      out += `?${sql.slice(i + 1, j)}`;
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Where the literal, identifier or comment starting at `i` ends (just past it), or `i` if none starts there. */
function endOfQuotedOrComment(sql: string, i: number): number {
  const c = sql[i];
  if (c === "'" || c === '"' || c === '`') {
    // A doubled quote inside is an escaped quote: keep scanning.
    let j = i + 1;
    while (j < sql.length) {
      if (sql[j] === c) {
        if (sql[j + 1] === c) j += 2;
        else return j + 1;
      } else j++;
    }
    return sql.length;
  }
  if (c === '-' && sql[i + 1] === '-') {
    const end = sql.indexOf('\n', i);
    return end === -1 ? sql.length : end + 1;
  }
  if (c === '/' && sql[i + 1] === '*') {
    const end = sql.indexOf('*/', i + 2);
    return end === -1 ? sql.length : end + 2;
  }
  return i;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isWordChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_$]/.test(c);
