import type { RegistrationError } from '../../../generated/client-registration/types.gen.ts';
import { statusOf, type ErrorCode, type PortolanError, type Problem } from '../../lib/errors.ts';
import type { HandlerResponse } from '../../server/handler-types.ts';

/** Headers of every client-registration answer (seed D: Connection close; designed: no-store, it may carry a secret). */
export const REGISTRATION_HEADERS = Object.freeze({ connection: 'close', 'cache-control': 'no-store' });

/**
 * The `error` words: of the designed failures (spec: `invalid request` 400, `request too large` 413)
 * and of the flow's 403s (seed Errors D).
 */
const ERROR_WORDS: Partial<Record<ErrorCode, string>> = {
  invalidRequest: 'invalid request',
  malformedBody: 'invalid request',
  payloadTooLarge: 'request too large',
  credentialsRejected: 'invalid user credentials',
  clientAppCreationFailed: 'ClientApp creation failed',
  clientAppBindingFailed: 'ClientApp binding failed',
  accessPolicySyncFailed: 'Synchronization failed',
};
const words = (code: ErrorCode) => ERROR_WORDS[code] ?? code.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);

/** A registration failure: `{error, error-message}` with the registration headers. */
function registrationFailure(status: number, error: string, message: string): HandlerResponse {
  return { status, body: { error, 'error-message': message } satisfies RegistrationError, headers: REGISTRATION_HEADERS };
}

/**
 * The framework's failures (validation, 404/405, 413, 500) in the registration shape. Validation
 * problems become the spec's sentences about form fields (`form field password is required`), read
 * from their structured pointer and keyword, so a client reads what to fix rather than a JSON-schema
 * path. A field the form should not have is not named: its "name" may be a password sent without `=`.
 */
export function renderRegistrationError(error: PortolanError): HandlerResponse {
  const message = error.code === 'invalidRequest' && error.problems?.length ? formProblems(error.problems) : error.message;
  return registrationFailure(statusOf(error), words(error.code), message);
}

function formProblems(problems: readonly Problem[]): string {
  const sentences = problems.map(formProblem);
  const required = ['username', 'password'].filter((f) => sentences.includes(`form field ${f} is required`));
  const merged =
    required.length === 2
      ? [
          'form fields username and password are required',
          ...sentences.filter((s) => !/^form field (username|password) is required$/.test(s)),
        ]
      : sentences;
  return [...new Set(merged)].join('; ');
}

function formProblem({ pointer, keyword, params, message }: Problem): string {
  const field = pointer.startsWith('/body/') ? pointer.slice('/body/'.length) : undefined;
  if (keyword === 'required' && pointer === '' && params?.missingProperty === 'requestBody')
    return 'form fields username and password are required';
  if (keyword === 'required' && pointer === '/body') return `form field ${String(params?.missingProperty)} is required`;
  if (keyword === 'additionalProperties' && pointer === '/body') return UNKNOWN_FIELD;
  if (field && keyword === 'minLength' && params?.limit === 1) return `form field ${field} must not be empty`;
  if (field && keyword === 'maxLength') return `form field ${field} must be at most ${String(params?.limit)} characters`;
  if (pointer === '/header/user-agent' && keyword === 'maxLength')
    return `the User-Agent header must be at most ${String(params?.limit)} characters`;
  return `${pointer.slice(1).replaceAll('/', '.') || 'request'} ${message}`;
}

/** The form may hold only username and password; the other field's name is never echoed. */
export const UNKNOWN_FIELD = 'the form may hold only the fields username and password';
