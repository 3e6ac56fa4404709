import { ERROR_CODES, fail, ok, type PortolanError, type Result, statusOf } from '../../lib/errors.ts';
import { objectText } from './declaration/json-text.ts';
import { type CodedError, codedError } from './device-errors.ts';

/**
 * The `code` of an entry in an appsvcs result list: the real product's body format (task records keep
 * it as it was answered), numbering a tenant's own outcome as the real product does; the status of an
 * answer is the handler's (appsvcs-handlers.ts), from the outcome's kind.
 */
export const RESULT_CODE = { success: 200, failed: ERROR_CODES.declarationFailed.status } as const;

/** An entry of an appsvcs result list, its members in the real product's order. */
export type TenantResult = {
  code: number;
  message: string;
  response?: string;
  lineCount?: number;
  warnings?: string[];
  host: string;
  runTime: number;
  tenant?: string;
};

/**
 * What an operation on named tenants did: every one as asked (`done`), some of them (`partial`) or
 * none (`failed`); its result list, and the declaration of those tenants as they now are (JSON text).
 */
export type Applied = { kind: 'done' | 'partial' | 'failed'; results: readonly TenantResult[]; declaration: string; dryRun: boolean };

/** A deployment queued (`POST /declare?async=true`): the task record as it first reads. */
export type AcceptedTask = {
  id: string;
  results: { code: number; message: string }[];
  declaration: Record<string, never>;
  selfLink: string;
};

/**
 * What a deployment did: queued (`accepted`); ran, for every tenant (`done`: its results, or the
 * declaration a `retrieve` asked for, as JSON text) or some (`partial`); or found nothing to
 * retrieve (`empty`).
 */
export type DeployOutcome = { kind: 'accepted'; task: AcceptedTask } | { kind: 'done' | 'partial'; json: string } | { kind: 'empty' };

/** A request the declarative deployment refuses: not JSON, or not a valid deployment request. */
export type RequestError = CodedError<'malformedBody' | 'declarationInvalid'>;
export type BusyError = CodedError<'deploymentBusy'>;
export type DeployError = RequestError | BusyError | CodedError<'declarationFailed'>;

/** A body that is not JSON (the device REST's message: the error shape renders it so; task records repeat it). */
export const malformedRequest = (): RequestError => codedError('malformedBody', 'Found invalid JSON body in the request.');

/** Every problem of a request, each `"<pointer>: <message>"` (declaration/request.ts). */
export const invalidRequest = (errors: readonly string[]): RequestError =>
  codedError('declarationInvalid', undefined, [['errors', JSON.stringify(errors)]]);

export const deploymentBusy = (hostname: string): BusyError =>
  codedError('deploymentBusy', `Configuration operation in progress on device ${hostname}, please try again in 2 minutes`);

/** The members of a result answer, the declaration spliced in as the text it is. */
const resultMembers = (applied: Applied): [string, string][] => [
  ['results', JSON.stringify(applied.results)],
  ['declaration', applied.declaration],
  ...(applied.dryRun ? [['dryRun', 'true'] as [string, string]] : []),
];

/** An operation's results as answered: its result text, or (no tenant as asked) `declarationFailed` carrying them. */
function appliedOutcome(applied: Applied): Result<{ kind: 'done' | 'partial'; json: string }, CodedError<'declarationFailed'>> {
  if (applied.kind === 'failed') return fail(codedError('declarationFailed', undefined, resultMembers(applied)));
  return ok({ kind: applied.kind, json: objectText(resultMembers(applied)) });
}

/** What an operation under the lock did: tenants applied, a declaration retrieved (undefined: none deployed), or a request refused. */
export type OperationOutcome =
  | { kind: 'applied'; applied: Applied }
  | { kind: 'retrieved'; declaration: string | undefined }
  | { kind: 'refused'; error: RequestError };

/** A deployment's outcome as the service answers it. */
export function deployResult(outcome: OperationOutcome): Result<DeployOutcome, DeployError> {
  switch (outcome.kind) {
    case 'applied':
      return appliedOutcome(outcome.applied);
    case 'retrieved':
      return ok(outcome.declaration === undefined ? { kind: 'empty' } : { kind: 'done', json: outcome.declaration });
    case 'refused':
      return fail(outcome.error);
  }
}

const taskLink = (id: string) => `https://localhost/mgmt/shared/appsvcs/task/${id}`;

/** A task record as JSON text: the declaration it names is text already. */
const recordText = (id: string, results: readonly unknown[], declaration = '{}') =>
  objectText([
    ['id', JSON.stringify(id)],
    ['results', JSON.stringify(results)],
    ['declaration', declaration],
    ['selfLink', JSON.stringify(taskLink(id))],
  ]);

/** The result entry a task record gives an operation without results of its own: a refusal, or a retrieval. */
const operationResult = (host: string, error?: PortolanError) => ({
  code: error ? statusOf(error) : RESULT_CODE.success,
  message: error ? error.message : 'success',
  host,
});

/** The record of a finished operation, as `GET /task/<id>` shows it. */
export function recordOf(id: string, outcome: OperationOutcome, host: string): string {
  switch (outcome.kind) {
    case 'applied':
      return recordText(id, outcome.applied.results, outcome.applied.declaration);
    case 'retrieved':
      return recordText(id, [operationResult(host)], outcome.declaration);
    case 'refused':
      return recordText(id, [operationResult(host, outcome.error)]);
  }
}

/** The record of an operation that threw (logged where it was caught). */
export const failedRecord = (id: string, host: string) =>
  recordText(id, [operationResult(host, codedError('internal', 'declaration failed'))]);

/** The record of a queued deployment until it runs. */
export const queuedRecord = (id: string) => recordText(id, [{ code: 0, message: 'in progress' }]);

/** A deployment queued, as its answer shows it. */
export const acceptedTask = (id: string): AcceptedTask => ({
  id,
  results: [{ code: 0, message: 'Declaration successfully submitted' }],
  declaration: {},
  selfLink: taskLink(id),
});
