// A connection's variables: they last as long as the connection, so what they hold is bounded when a value
// is stored (`set`, `append`, `lappend`, `incr`, `foreach`...), not after the run: a run that fails still
// cannot leave more behind than the bound.
import { BudgetError } from './signals.ts';

/** The most characters (names and values) a connection's variables may hold: 1 MiB. */
export const MAX_HELD_BYTES = 1 << 20;

export class VariableBoundError extends BudgetError {}

/** A Map of variables that counts the characters it holds and refuses a store past `max`. */
export class Variables extends Map<string, string> {
  #held = 0;
  readonly #max: number;

  constructor(max = MAX_HELD_BYTES) {
    super();
    this.#max = max;
  }

  /** Characters held: every name and value. */
  get held(): number {
    return this.#held;
  }

  override set(name: string, value: string): this {
    const old = super.get(name);
    const held = this.#held + value.length - (old === undefined ? -name.length : old.length);
    if (held > this.#max) throw new VariableBoundError(`the connection's variables hold more than ${this.#max} bytes`);
    this.#held = held;
    return super.set(name, value);
  }

  override delete(name: string): boolean {
    const old = super.get(name);
    if (old === undefined) return false;
    this.#held -= name.length + old.length;
    return super.delete(name);
  }

  override clear(): void {
    this.#held = 0;
    super.clear();
  }
}
