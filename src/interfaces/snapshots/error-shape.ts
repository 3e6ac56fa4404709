import { XMLBuilder } from 'fast-xml-parser';
import { statusOf } from '../../lib/errors.ts';
import type { ErrorRenderer } from '../../server/role-app.ts';

const DIAGNOSTICS_JSON = 'application/vnd.vendor.diagnostics.api+json';
const DIAGNOSTICS_XML = 'application/vnd.vendor.diagnostics.api+xml';
const xml = new XMLBuilder({ format: false });

/** C: `{code, message}` in the format the Accept header asks for, XML unless it asks for JSON. */
export const renderSnapshotsError: ErrorRenderer = (e, request) => {
  const body = { code: statusOf(e), message: e.message };
  if (String(request.headers.accept ?? '').includes('+json')) return { status: statusOf(e), body, contentType: DIAGNOSTICS_JSON };
  return { status: statusOf(e), body: xml.build({ error: body }), contentType: DIAGNOSTICS_XML };
};
