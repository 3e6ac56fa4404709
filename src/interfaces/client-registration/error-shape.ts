import type { RegistrationError } from '../../../generated/client-registration/types.gen.ts';
import { statusOf, type ErrorCode, type PortolanError } from '../../lib/errors.ts';
import type { HandlerResponse } from '../../server/handler-types.ts';

/** Headers of every client-registration answer (seed D: Connection close; designed: no-store, it may carry a secret). */
export const REGISTRATION_HEADERS = Object.freeze({ connection: 'close', 'cache-control': 'no-store' });

/** The `error` words of the designed failures (spec: `invalid request` 400, `request too large` 413). */
const ERROR_WORDS: Partial<Record<ErrorCode, string>> = { invalidRequest: 'invalid request', malformedBody: 'invalid request', payloadTooLarge: 'request too large' };
const words = (code: ErrorCode) => ERROR_WORDS[code] ?? code.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);

/** A registration answer: `{error, error-message}` with the registration headers. */
export function registrationFailure<S extends number>(status: S, error: string, message: string) {
  return { status, body: { error, 'error-message': message } satisfies RegistrationError, headers: REGISTRATION_HEADERS };
}

/**
 * The framework's failures (validation, 404/405, 413, 500) in the registration shape. Validation
 * problems are rewritten into the spec's sentences about form fields (`form field password is
 * required`), so a client reads what to fix rather than a JSON-schema path.
 */
export function renderRegistrationError(error: PortolanError): HandlerResponse {
  const message = error.code === 'invalidRequest' && error.details?.length ? formProblems(error.details) : error.message;
  return registrationFailure(statusOf(error), words(error.code), message);
}

function formProblems(details: readonly string[]): string {
  const sentences = details.map(formProblem);
  const required = ['username', 'password'].filter((f) => sentences.includes(`form field ${f} is required`));
  const merged = required.length === 2
    ? ['form fields username and password are required', ...sentences.filter((s) => !/^form field (username|password) is required$/.test(s))]
    : sentences;
  return [...new Set(merged)].join('; ');
}

function formProblem(problem: string): string {
  if (problem === "request must have required property 'requestBody'") return 'form fields username and password are required';
  let m = /^body must have required property '(\w+)'$/.exec(problem);
  if (m) return `form field ${m[1]} is required`;
  m = /^body must NOT have additional properties '(.*)'$/.exec(problem);
  if (m) return `unknown form field ${m[1]!.slice(0, 64)}`;
  m = /^body\.(\w+) must NOT have fewer than 1 characters$/.exec(problem);
  if (m) return `form field ${m[1]} must not be empty`;
  m = /^body\.(\w+) must NOT have more than (\d+) characters$/.exec(problem);
  if (m) return `form field ${m[1]} must be at most ${m[2]} characters`;
  m = /^header\.user-agent must NOT have more than (\d+) characters$/.exec(problem);
  if (m) return `the User-Agent header must be at most ${m[1]} characters`;
  return problem;
}
