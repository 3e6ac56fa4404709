import { XMLBuilder } from 'fast-xml-parser';
import { renderRegistrationError } from './client-registration/error-shape.ts';
import { statusOf, type ErrorCode, type PortolanError } from '../lib/errors.ts';
import type { InterfaceName } from '../lib/spec-catalog.ts';
import type { HandlerResponse } from '../server/handler-types.ts';
import type { ErrorRenderer } from '../server/role-app.ts';
import type { Clock } from '../lib/clock.ts';

/** A registry code in words (`invalidRequest` -> `invalid request`), for shapes that carry a short error name, as the seed's `invalid user credentials`. */
const errorName = (code: ErrorCode) => code.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);

/**
 * The device REST's `apiError` numbers (REAL-PRODUCTS.md): 1 for an unparsable body, 3 for a missing
 * object, 26214401 for the framework's own validation; other failures carry their HTTP status.
 */
const DEVICE_API_ERROR: Partial<Record<ErrorCode, number>> = { malformedBody: 1, notFound: 3, invalidRequest: 26214401 };

const DIAGNOSTICS_JSON = 'application/vnd.vendor.diagnostics.api+json';
const DIAGNOSTICS_XML = 'application/vnd.vendor.diagnostics.api+xml';
const xml = new XMLBuilder({ format: false });

const json = (error: PortolanError, body: unknown): HandlerResponse => ({ status: statusOf(error), body });

/** Each interface's error wire shape (the first schema of its `x-portolan-error-schemas`). */
export function createErrorRenderers(clock: Clock): Record<InterfaceName, ErrorRenderer> {
  const gateway: ErrorRenderer = (e) => json(e, { error: errorName(e.code), 'error-message': e.message });
  return {
    mapping: (e) => json(e, { status: 'error', message: e.message }),
    topology: (e) => json(e, { code: statusOf(e), message: e.message, kind: ':resterrorresponse' }),
    // The diagnostics API answers in the format the Accept header asks for, XML unless it asks for JSON.
    snapshots: (e, request) => {
      const body = { code: statusOf(e), message: e.message };
      if (/\+json/.test(String(request.headers.accept ?? ''))) return { ...json(e, body), contentType: DIAGNOSTICS_JSON };
      return { status: statusOf(e), body: xml.build({ error: body }), contentType: DIAGNOSTICS_XML };
    },
    // Every registration answer closes the connection and is never cached (seed D; it may carry a secret);
    // validation problems read as the spec's sentences about form fields.
    'client-registration': renderRegistrationError,
    'rate-limit': gateway,
    'access-session': gateway,
    'device-config': (e) => json(e, {
      code: statusOf(e),
      message: e.code === 'malformedBody' ? 'Found invalid JSON body in the request.' : e.message,
      errorStack: [],
      apiError: DEVICE_API_ERROR[e.code] ?? statusOf(e),
    }),
    health: (e) => json(e, { status: 'error', message: e.message, timestamp: clock.now().toISOString() }),
  };
}
