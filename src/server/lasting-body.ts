/**
 * Bodies a handler answers again and again unchanged (the answer about a record that never changes): frozen
 * all the way down and serialised once, so the role app hands the adapter the same bytes every time instead
 * of running JSON.stringify per request. The handler keeps its typed body (`lastingBody` returns it as it is).
 */
const serializedBodies = new WeakMap<object, Buffer>();

/**
 * Marks a JSON body as lasting: frozen (a later change throws rather than serve stale bytes) and serialised now.
 *
 * @example
 * const answer = lastingBody({ status: 'success', data: vessel });
 * return { status: 200, body: answer };
 */
export function lastingBody<T extends object>(body: T): T {
  deepFreeze(body);
  serializedBodies.set(body, Buffer.from(JSON.stringify(body), 'utf8'));
  return body;
}

/** The bytes of a lasting body (`lastingBody`), or undefined for any other body. */
export function serializedBody(body: unknown): Buffer | undefined {
  return typeof body === 'object' && body !== null ? serializedBodies.get(body) : undefined;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
}
