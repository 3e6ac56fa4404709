// How a run leaves the ordinary flow: a Tcl error (the rule failed), past its budget, or Tcl's
// `return`/`break`/`continue`. Errors are classes; the control signals are single objects, thrown often.

/** A Tcl error: the run ends, the client gets 500 and the message goes to the device's log. */
export class TclError extends Error {
  /** The line of the rule's text the failing command starts on, set by the innermost command that knows it. */
  line: number | undefined;
  constructor(message: string, line?: number) {
    super(message);
    this.line = line;
  }
}

/** The run went past its step, time, byte or depth budget. */
export class BudgetError extends TclError {}

/** `return`: ends the current `when` body. */
export const RETURN = { signal: 'return' } as const;
/** `break` and `continue` inside `foreach`/`while`/`for`. */
export const BREAK = { signal: 'break' } as const;
export const CONTINUE = { signal: 'continue' } as const;
export type Signal = typeof RETURN | typeof BREAK | typeof CONTINUE;

export const isSignal = (value: unknown): value is Signal => value === RETURN || value === BREAK || value === CONTINUE;
