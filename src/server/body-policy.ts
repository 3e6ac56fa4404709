import { portolanError, type PortolanError } from '../lib/errors.ts';

/**
 * What an operation accepts as a request body, decided once from its spec:
 * - `mediaTypes`: the declared media types (`application/json`, `application/*`, `*\/*` ...); a body of
 *   another type, or without a Content-Type, is refused with 415 before a byte is read;
 * - `maxBytes`: `x-portolan-max-body-bytes` on the operation, else the role's configured limit (413);
 * - `mode`: `buffer` (read whole, parsed, validated) or `stream` (multipart uploads, or
 *   `x-portolan-body-mode: stream`): the handler gets the unread stream, nothing is buffered;
 * - `validatedBy`: `framework` (the request-body schema is checked before the handler, 400) or
 *   `handler` (`x-portolan-body-validation: handler`: the body is parsed but the handler validates
 *   it itself, because the interface answers schema errors in its own way, for example the
 *   device's 422 `declaration is invalid` with one pointer per problem);
 * - `parsedBy`: `framework` (a buffered body is parsed by its media type before the handler) or
 *   `handler` (`x-portolan-body-parsing: handler`, which implies `validatedBy: handler`): the handler
 *   gets the bytes only (`rawBody`) and parses them itself, for example off the event loop when
 *   they are large (the device's declarations: parsing 2 MiB of JSON holds every role ~100 ms).
 */
export type BodyPolicy = {
  mediaTypes: readonly string[];
  required: boolean;
  maxBytes: number | undefined;
  mode: 'none' | 'buffer' | 'stream';
  validatedBy: 'framework' | 'handler';
  parsedBy: 'framework' | 'handler';
};

type OperationObject = Record<string, unknown>;

export function operationBodyPolicy(operation: OperationObject): BodyPolicy {
  const requestBody = operation.requestBody as { content?: Record<string, unknown>; required?: boolean } | undefined;
  const mediaTypes = Object.keys(requestBody?.content ?? {}).map((m) => m.toLowerCase());
  const declaredLimit = operation['x-portolan-max-body-bytes'];
  const declaredMode = operation['x-portolan-body-mode'];
  const parsedByHandler = operation['x-portolan-body-parsing'] === 'handler';
  const mode =
    mediaTypes.length === 0
      ? 'none'
      : declaredMode === 'stream' || mediaTypes.every((m) => m === 'multipart/form-data')
        ? 'stream'
        : 'buffer';
  return {
    mediaTypes,
    required: requestBody?.required === true,
    maxBytes: typeof declaredLimit === 'number' ? declaredLimit : undefined,
    mode,
    validatedBy: operation['x-portolan-body-validation'] === 'handler' || parsedByHandler ? 'handler' : 'framework',
    parsedBy: parsedByHandler ? 'handler' : 'framework',
  };
}

/** The media type of a Content-Type header, lower case, parameters dropped; '' when there is none. */
export function mediaTypeOf(contentType: string | readonly string[] | undefined): string {
  const value = typeof contentType === 'string' ? contentType : (contentType?.[0] ?? '');
  const semicolon = value.indexOf(';');
  return (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
}

/** Whether the request carries a body at all (a declared length above 0, or chunked transfer). */
export function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return headers['transfer-encoding'] !== undefined;
}

/**
 * Checks a request's body against the policy before anything is read: 415 for a media type the
 * operation does not declare (or none given), 413 for a declared length over the limit.
 */
export function admitBody(
  policy: BodyPolicy,
  headers: Record<string, string | string[] | undefined>,
  limit: number,
): PortolanError | undefined {
  if (policy.mode === 'none' || !hasBody(headers)) return undefined;
  const mediaType = mediaTypeOf(headers['content-type']);
  if (!policy.mediaTypes.some((declared) => matches(declared, mediaType))) {
    const accepted = policy.mediaTypes.join(', ');
    const message =
      mediaType === ''
        ? `The request body has no Content-Type; send one of: ${accepted}.`
        : `The request body media type is not accepted here; send one of: ${accepted}.`;
    return portolanError('unsupportedMediaType', message);
  }
  const declared = Number(headers['content-length'] ?? 0);
  if (declared > limit) return tooLarge(limit);
  return undefined;
}

/** The 413 of a body over `limit` bytes, declared or counted. */
export const tooLarge = (limit: number) => portolanError('payloadTooLarge', `The request body exceeds the limit of ${limit} bytes.`);

function matches(declared: string, mediaType: string): boolean {
  if (mediaType === '') return false;
  if (declared === '*/*' || declared === mediaType) return true;
  return declared.endsWith('/*') && mediaType.startsWith(declared.slice(0, -1));
}
