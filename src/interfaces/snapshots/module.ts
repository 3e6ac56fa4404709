import type * as Sdk from '../../../generated/snapshots/sdk.gen.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import type { InterfaceModule } from '../../server/interface-module.ts';
import { renderSnapshotsError } from './error-shape.ts';

/**
 * Interface C, the snapshot diagnostics API and its login server. Its operations answer 501 until
 * its issue lands; the session-cookie scheme is already enforced: no login issues sessions yet, so
 * every session is unknown (403, as the spec says), checked before the request is parsed.
 */
export const snapshotsModule = {
  name: 'snapshots',
  errorShape: () => renderSnapshotsError,
  authenticators: () => ({
    ssoSession: ({ cookies }) => ({
      ok: false,
      error: { code: 'forbidden', message: cookies.ssosession === undefined ? 'A session is required; log in first.' : 'The session is unknown or expired; log in again.' },
    }),
  }),
  create: () => ({}) satisfies OperationHandlers<typeof Sdk>,
} satisfies InterfaceModule;
