import { fail, ok, type PortolanError, type Result, statusOf } from '../../lib/errors.ts';
import { type DeployError, type DeployOutcome, invalidRequest, malformedRequest, type RequestError } from './appsvcs-outcome.ts';
import { objectText } from './declaration/json-text.ts';
import { isRecord, own } from './declaration/model.ts';
import type { DeclarativeService } from './declarative-service.ts';
import { codedError } from './device-errors.ts';
import { renderDeviceError } from './error-shape.ts';

/** Declarations one request may list (designed). */
export const MAX_DECLARATIONS = 100;

/** The real extension's words for two declarations of one request that name the same tenant. */
export const DUPLICATE_MESSAGE =
  "Error(s): 'Invalid/Duplicate': another request exists with the same targetHost-declaration tenant, declaration target, and/or declaration tenant-app";

/** Whether a body's bytes are a JSON list (its first character other than white space is `[`). */
export function isListBody(raw: Uint8Array | undefined): boolean {
  if (!raw) return false;
  for (const byte of raw) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    return byte === 0x5b;
  }
  return false;
}

/** What a list of declarations was answered: its status, its items (a JSON list, as text) and, for an error status, a message. */
export type ListAnswer = { status: number; items: string; message?: string };

type Item = { status: number; text: string; message?: string };

const tenantsOf = (item: unknown): string[] => {
  const declaration = isRecord(item) && own(item, 'class') === 'AS3' ? own(item, 'declaration') : item;
  if (!isRecord(declaration)) return [];
  return Object.entries(declaration)
    .filter(([, value]) => isRecord(value) && own(value, 'class') === 'Tenant')
    .map(([name]) => name);
};

/** An item's answer when its deployment was refused: the error as the interface renders it. */
function refusedItem(error: PortolanError): Item {
  const rendered = renderDeviceError(error, { headers: {} });
  const body = rendered.body;
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : JSON.stringify(body);
  return { status: statusOf(error), text, message: error.message };
}

function answeredItem(outcome: DeployOutcome): Item {
  switch (outcome.kind) {
    case 'accepted':
      return { status: 202, text: JSON.stringify(outcome.task) };
    case 'done':
      return { status: 200, text: outcome.json };
    case 'partial':
      return { status: 207, text: outcome.json };
    case 'empty':
      return { status: 204, text: JSON.stringify({ code: 204, message: 'no declarations found' }) };
  }
}

/**
 * `POST /declare` with a list of declarations (after the real extension): each deployed in turn as if
 * posted alone, each answered on its own; two that name the same tenant are both refused
 * (`DUPLICATE_MESSAGE`, 422) and the others still run. The list's status is its items' common one (204
 * read as 200), else 207. The body is parsed here, on the event loop (bounded by the operation's 2 MiB);
 * each declaration is then checked by the service as any other (a large one on its thread).
 */
export async function deployList(
  service: Pick<DeclarativeService, 'deploy'>,
  text: string,
  query: Parameters<DeclarativeService['deploy']>[1],
): Promise<Result<ListAnswer, RequestError>> {
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    return fail(malformedRequest());
  }
  if (!Array.isArray(list) || list.length === 0) return fail(invalidRequest([': should NOT have fewer than 1 items']));
  if (list.length > MAX_DECLARATIONS) return fail(invalidRequest([`: should NOT have more than ${MAX_DECLARATIONS} items`]));

  const owners = new Map<string, number>();
  for (const item of list) for (const tenant of new Set(tenantsOf(item))) owners.set(tenant, (owners.get(tenant) ?? 0) + 1);
  const items: Item[] = [];
  for (const item of list) {
    if (tenantsOf(item).some((tenant) => owners.get(tenant)! > 1)) {
      items.push({ status: 422, text: JSON.stringify({ code: 422, message: DUPLICATE_MESSAGE }), message: DUPLICATE_MESSAGE });
      continue;
    }
    const deployed = await service.deploy(Buffer.from(JSON.stringify(item)), query);
    items.push(deployed.ok ? answeredItem(deployed.value) : refusedItem(deployed.error as DeployError));
  }
  const statuses = new Set(items.map((i) => (i.status === 204 ? 200 : i.status)));
  const status = statuses.size === 1 ? [...statuses][0]! : 207;
  const listed = `[${items.map((i) => i.text).join(',')}]`;
  return ok({ status, items: listed, ...(status >= 400 ? { message: items[0]!.message ?? 'declaration failed' } : {}) });
}

/** A list answer's body text: `{code, items}`. */
export const listText = (answer: ListAnswer) =>
  objectText([
    ['code', String(answer.status)],
    ['items', answer.items],
  ]);

/** A list answer with an error status, as the failure the error shape renders: `{code, message, items}`. */
export const listFailure = (answer: ListAnswer) =>
  codedError(answer.status === 503 ? 'deploymentBusy' : 'declarationFailed', answer.message, [['items', answer.items]]);
