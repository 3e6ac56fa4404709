import { statusOf } from '../../lib/errors.ts';
import type { ErrorRenderer } from '../../server/role-app.ts';

/** B: the management system's REST error `{code, message, kind}`. */
export const renderTopologyError: ErrorRenderer = (e) => ({
  status: statusOf(e),
  body: { code: statusOf(e), message: e.message, kind: ':resterrorresponse' },
});
