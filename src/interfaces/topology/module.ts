import type * as Sdk from '../../../generated/topology/sdk.gen.ts';
import type { OperationHandlers } from '../../server/handler-types.ts';
import type { InterfaceModule } from '../../server/interface-module.ts';
import { renderTopologyError } from './error-shape.ts';

/**
 * Interface B, the topology configuration API of the management system. Its operations answer 501
 * until its issue lands; the token scheme is already enforced: no login issues tokens yet, so every
 * token is unknown (401), checked before the request is parsed.
 */
export const topologyModule = {
  name: 'topology',
  errorShape: () => renderTopologyError,
  authenticators: () => ({
    vendorAuthToken: ({ headers }) => ({
      ok: false,
      error: {
        code: 'unauthorized',
        message: headers['x-vendor-auth-token'] === undefined ? 'X-Vendor-Auth-Token is required; log in first.' : 'The token is unknown or expired; log in again.',
      },
    }),
  }),
  create: () => ({}) satisfies OperationHandlers<typeof Sdk>,
} satisfies InterfaceModule;
