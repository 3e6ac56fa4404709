import { type CodedError, codedError } from './device-errors.ts';

export type StandbyError = CodedError<'deviceStandby'>;

/** The active device's URL as a message may name it: no user information, bounded. */
function shownUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.origin.slice(0, 200);
  } catch {
    return undefined;
  }
}

/**
 * The standby device's refusal of an operation only the active one runs (when it could not pass it on),
 * naming the active one the way it advertises itself.
 */
export function standbyRefusal(activeUrl: string | undefined): StandbyError {
  const shown = activeUrl === undefined ? undefined : shownUrl(activeUrl);
  return codedError(
    'deviceStandby',
    shown
      ? `This device is the standby of its pair; the active device is ${shown} and did not answer, please try again in a few seconds`
      : 'This device is the standby of its pair and no active device holds the configuration now, please try again in a few seconds',
  );
}
