import { statusOf } from '../../lib/errors.ts';
import type { ErrorRenderer } from '../../server/role-app.ts';
import { errorFormat, errorXml, MEDIA_TYPES } from './formats/index.ts';

/** C: `{code, message}` in the format the Accept header asks for, XML unless it asks for JSON. */
export const renderSnapshotsError: ErrorRenderer = (e, request) => {
  const body = { code: statusOf(e), message: e.message };
  const format = errorFormat(typeof request.headers.accept === 'string' ? request.headers.accept : undefined);
  return { status: statusOf(e), body: format === 'json' ? body : errorXml(body), contentType: MEDIA_TYPES[format] };
};
