import hyperid from 'hyperid';

/** Makes unique, URL-safe record ids (`[A-Za-z0-9_-]`), passed in so tests can fix them. */
export type IdGenerator = () => string;

export function createIdGenerator(): IdGenerator {
  const next = hyperid({ urlSafe: true });
  return () => next();
}

/** Ids `prefix-1`, `prefix-2`, ... for tests. */
export function createSequentialIds(prefix = 'id'): IdGenerator {
  let n = 0;
  return () => `${prefix}-${++n}`;
}
