import t from 'tap';
import { toSqlitePlaceholders } from './sqlite-placeholders.ts';

t.test('positional parameters become numbered SQLite parameters', async (t) => {
  t.equal(toSqlitePlaceholders('SELECT a FROM t WHERE a = $1 AND b IN ($2, $10)'), 'SELECT a FROM t WHERE a = ?1 AND b IN (?2, ?10)');
  t.equal(toSqlitePlaceholders('UPDATE t SET n=$1 WHERE id=$1'), 'UPDATE t SET n=?1 WHERE id=?1', 'a repeated parameter keeps its number');
});

t.test('literals, quoted identifiers and comments are left untouched', async (t) => {
  t.equal(
    toSqlitePlaceholders("SELECT '$1', 'it''s $2', \"col$3\" FROM t WHERE x = $1"),
    "SELECT '$1', 'it''s $2', \"col$3\" FROM t WHERE x = ?1",
  );
  t.equal(toSqlitePlaceholders('SELECT $1 -- not $2\n, $2 /* nor $3 */'), 'SELECT ?1 -- not $2\n, ?2 /* nor $3 */');
  t.equal(toSqlitePlaceholders('SELECT price$1 FROM t'), 'SELECT price$1 FROM t', 'a $ inside a name is not a parameter');
  t.equal(toSqlitePlaceholders('SELECT 1'), 'SELECT 1');
});
