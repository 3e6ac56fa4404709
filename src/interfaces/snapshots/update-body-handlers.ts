import type { ValidateFunction } from 'ajv';
import { fail, portolanError, type PortolanError, type Result } from '../../lib/errors.ts';
import { mediaTypeOf } from '../../server/body-policy.ts';
import type { HandlerRequest } from '../../server/handler-types.ts';
import { describeProblems, MAX_PROBLEMS, toProblems } from '../../server/validation-problems.ts';
import { xmlFields } from './formats/index.ts';
import type { MetadataPatch } from './snapshot-store.ts';
import { snapshotPatch } from './snapshot-wire.ts';

/** The XML media types of an update: the API's default (the bare vendor type names the latest, XML) and `+xml`. */
const XML_TYPES: ReadonlySet<string> = new Set(['application/vnd.vendor.diagnostics.api', 'application/vnd.vendor.diagnostics.api+xml']);
const FORM = 'application/x-www-form-urlencoded';
/** The root element of an XML update, as of the record it changes. */
const XML_ROOT = 'snapshot';
/** A form and XML carry text only: `visible_in_gui` comes as `true` or `false`, which mean the booleans. */
const TEXT_BOOLEANS: ReadonlyMap<unknown, boolean> = new Map([
  ['true', true],
  ['false', false],
]);

/** The request parts an update's body is read from. */
export type UpdateBodyRequest = Pick<HandlerRequest, 'headers' | 'body' | 'rawBody'>;
/** Why an update's body is refused: not readable (malformedBody) or not a `SnapshotUpdate` (invalidRequest), both 400. */
export type UpdateBodyError = PortolanError & { code: 'malformedBody' | 'invalidRequest' };

/**
 * The schema of the request as the framework checks others (`{requestBody: SnapshotUpdate}`), so the 400s
 * read the same (`Invalid request: body.description must NOT have more than 1024 characters.`).
 */
export const UPDATE_REQUEST_SCHEMA = {
  type: 'object',
  required: ['requestBody'],
  properties: { requestBody: { $ref: 'spec#/components/schemas/SnapshotUpdate' } },
};

/**
 * Reads the metadata update of `updateSnapshot` in any media type the spec declares for it: JSON, a form,
 * or XML (`<snapshot><description>...</description></snapshot>`, the API's default format; the framework
 * cannot check XML against the schema, so the operation validates its body here, `x-portolan-body-validation:
 * handler`). Each is checked against `SnapshotUpdate`; a refusal is the interface's 400 (malformedBody,
 * invalidRequest).
 *
 * @example
 * const read = createUpdateBodyReader(async () => ajv.compile(UPDATE_REQUEST_SCHEMA));
 * await read({ headers: { 'content-type': 'application/vnd.vendor.diagnostics.api' }, body: undefined, rawBody: xmlBytes });
 */
export function createUpdateBodyReader(schema: () => Promise<ValidateFunction>) {
  return async (request: UpdateBodyRequest): Promise<Result<MetadataPatch, UpdateBodyError>> => {
    const mediaType = mediaTypeOf(request.headers['content-type']);
    let fields: unknown = request.body;
    if (XML_TYPES.has(mediaType)) {
      if (request.rawBody === undefined) fields = undefined;
      else {
        const read = xmlFields(request.rawBody.toString('utf8'), XML_ROOT);
        if (!read.ok) return read;
        fields = read.value;
      }
    }
    if ((XML_TYPES.has(mediaType) || mediaType === FORM) && isObject(fields) && TEXT_BOOLEANS.has(fields.visible_in_gui))
      fields = { ...fields, visible_in_gui: TEXT_BOOLEANS.get(fields.visible_in_gui) };
    const validate = await schema();
    if (!validate({ requestBody: fields })) {
      const errors = validate.errors ?? [];
      const problems = toProblems(errors);
      const message = describeProblems(problems, Math.max(errors.length, problems.length));
      return fail({ ...portolanError('invalidRequest', message, problems.slice(0, MAX_PROBLEMS)), code: 'invalidRequest' as const });
    }
    return snapshotPatch(fields);
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
