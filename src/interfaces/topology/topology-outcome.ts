import { type ErrorCode, fail, type PortolanError, portolanError, type Result } from '../../lib/errors.ts';
import type { Problem as CheckProblem } from './topology-check.ts';

/** An expected failure of the topology service, typed by the registry codes it can carry (the handlers' spec allows them). */
export type Refusal<C extends ErrorCode> = PortolanError & { code: C };
/** A value, or the refusal that stands in for it. */
export type Outcome<T, C extends ErrorCode> = Result<T, Refusal<C>>;

/** A refusal with B's own sentence (the registry's default message says less). */
export const refused = <C extends ErrorCode>(code: C, message: string): Result<never, Refusal<C>> =>
  fail({ ...portolanError(code, message), code });

/** A name as messages quote it. */
export const quote = (name: string) => `'${name}'`;

/**
 * A create the topology check refused: every problem (the check's own sentences, schema, references
 * and targets alike; `keyword` names the check) and how many there are ("more than" once the list was cut).
 */
export function invalidTopology(problems: readonly CheckProblem[]): Refusal<'topologyInvalid'> {
  const count = problems.filter((p) => !p.message.startsWith('... and ')).length;
  const many = problems.length === count ? `${count}` : `more than ${count}`;
  return {
    ...portolanError(
      'topologyInvalid',
      `Invalid topology request: ${many} problem${count === 1 ? '' : 's'}.`,
      problems.map(({ pointer, message }) => ({ pointer, keyword: 'topologyCheck', message })),
    ),
    code: 'topologyInvalid',
  };
}
