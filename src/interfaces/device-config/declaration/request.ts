import type { Declaration, UpdateMode } from '../../../../generated/device-config/types.gen.ts';
import { toPointer } from '../../../lib/contract/json-pointer.ts';
import { checkDeclaration, type SchemaAt, type SchemaRange } from './declaration-check.ts';
import { declarationWithDefaults } from './defaults.ts';
import { findTooDeep } from './depth.ts';
import { clip, isRecord, own } from './model.ts';
import { schemaProblems } from './schema-messages.ts';

export type { SchemaAt, SchemaRange } from './declaration-check.ts';
export type DeployAction = 'deploy' | 'dry-run' | 'redeploy' | 'retrieve' | 'remove';

/** A deployment as the device runs it: every default applied, the bare `ADC` form read as `AS3`. */
export type DeployRequest = {
  action: DeployAction;
  persist: boolean;
  redeployAge: number;
  /** `action: dry-run` or the declaration's `controls.dryRun: true`. */
  dryRun: boolean;
  /** The query parameter, else the declaration's, else `selective`. */
  updateMode: UpdateMode;
  /** As given, with `virtualPort` written into each `Service_HTTP` without one (see defaults.ts). */
  declaration?: Declaration;
};

export type ReadDeployRequest = { ok: true; request: DeployRequest } | { ok: false; errors: string[] };

/** Levels below the declaration (or the wrapper) a body may nest; real declarations use about 12. */
export const MAX_DEPTH = 64;
const MAX_ERRORS = 100;
const MAX_ERROR_LENGTH = 200;
const CLASS_ERROR = '/class: should be equal to one of the allowed values (AS3, ADC)';
const DEPTH_MESSAGE = `should NOT be nested more than ${MAX_DEPTH} levels deep`;

/**
 * Reads the body of `POST /declare`: checks it against the spec's schemas, choosing each schema by
 * `class` as the real product does, and answers the request with its defaults, or every problem as
 * `"<pointer>: <message>"` (pointers into the declaration for the declaration, into the body for the
 * `AS3` wrapper's own properties; at most 100, each at most 200 characters). Never throws on any JSON.
 *
 * @example
 * const read = readDeployRequest(body, createSpecValidator(doc).at, { schemaMinimum: '3.0.0', schemaCurrent: '3.50.0' }, {});
 * if (!read.ok) return fail(invalidRequest(read.errors)); // appsvcs-outcome.ts: `declarationInvalid` carrying them
 */
export function readDeployRequest(
  body: unknown,
  schemaAt: SchemaAt,
  info: SchemaRange,
  query: { updateMode?: UpdateMode } = {},
): ReadDeployRequest {
  const kind = isRecord(body) ? own(body, 'class') : undefined;
  if (!isRecord(body) || (kind !== 'AS3' && kind !== 'ADC')) return { ok: false, errors: [CLASS_ERROR] };
  const wrapped = kind === 'AS3';
  const declaration = wrapped ? own(body, 'declaration') : body;
  // Only the first 100 are kept: a hostile body can hold a million problems.
  const errors: string[] = [];
  let more = 0;
  const report = (pointer: string, message: string) => {
    if (errors.length < MAX_ERRORS) errors.push(clip(`${pointer}: ${message}`, MAX_ERROR_LENGTH));
    else more++;
  };

  if (wrapped) {
    const { declaration: _, ...wrapper } = body;
    const tooDeep = findTooDeep(wrapper, MAX_DEPTH);
    if (tooDeep) return { ok: false, errors: [clip(`${toPointer(tooDeep.slice(0, 1))}: ${DEPTH_MESSAGE}`, MAX_ERROR_LENGTH)] };
    checkWrapper(body, schemaAt, report);
  }
  if (declaration !== undefined) {
    const tooDeep = findTooDeep(declaration, MAX_DEPTH);
    // The pointer stops at the member that holds the nesting: the rest is as long as the nesting.
    if (tooDeep) return { ok: false, errors: [clip(`${toPointer(tooDeep.slice(0, 4))}: ${DEPTH_MESSAGE}`, MAX_ERROR_LENGTH)] };
    checkDeclaration(declaration, schemaAt, info, report);
  }
  if (errors.length > 0) return { ok: false, errors: more > 0 ? [...errors, `... and ${more} more`] : errors };

  // Valid: the schemas guarantee the types read below.
  const action = ((wrapped && own(body, 'action')) || 'deploy') as DeployAction;
  const valid = declaration as Declaration | undefined;
  return {
    ok: true,
    request: {
      action,
      persist: wrapped ? own(body, 'persist') !== false : true,
      redeployAge: wrapped ? ((own(body, 'redeployAge') as number | undefined) ?? 0) : 0,
      dryRun: action === 'dry-run' || valid?.controls?.dryRun === true,
      updateMode: query.updateMode ?? valid?.updateMode ?? 'selective',
      ...(valid ? { declaration: declarationWithDefaults(valid) } : {}),
    },
  };
}

/**
 * The `AS3` wrapper against DeclarativeDeployment, its declaration replaced by `{}` so the schema's
 * "deploy needs a declaration" still holds while the declaration itself is left to checkDeclaration.
 */
function checkWrapper(body: Readonly<Record<string, unknown>>, schemaAt: SchemaAt, report: (pointer: string, message: string) => void) {
  const validate = schemaAt('/components/schemas/DeclarativeDeployment');
  const shallow = Object.hasOwn(body, 'declaration') ? { ...body, declaration: {} } : body;
  if (validate(shallow)) return;
  for (const problem of schemaProblems(validate.errors ?? [])) {
    if (problem.instancePath === '/declaration' || problem.instancePath.startsWith('/declaration/')) continue;
    report(problem.instancePath, problem.message);
  }
}
