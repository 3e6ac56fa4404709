/** A refusal the handlers answer as is: its status and the message of B's error body. */
export type Refusal = { status: 404 | 409 | 503; message: string };
/** An expected failure is a value (a refusal), a success its value. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

export const refuse = (status: Refusal['status'], message: string): { ok: false; refusal: Refusal } => ({
  ok: false,
  refusal: { status, message },
});
/** A name as messages quote it. */
export const quote = (name: string) => `'${name}'`;
