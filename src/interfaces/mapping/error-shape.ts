import { statusOf } from '../../lib/errors.ts';
import type { ErrorRenderer } from '../../server/role-app.ts';

/** A: `{status: "error", message}`. */
export const renderMappingError: ErrorRenderer = (e) => ({ status: statusOf(e), body: { status: 'error', message: e.message } });
