import type { RestError } from '../../../generated/topology/types.gen.ts';
import { type PortolanError, statusOf } from '../../lib/errors.ts';
import type { ErrorRenderer } from '../../server/role-app.ts';

/**
 * The problems a body lists (`errors`): only the topology check's. The framework's validation
 * problems stay summed up in its message, as the spec's LoginBadRequest examples show.
 */
const listed = (e: PortolanError): Pick<RestError, 'errors'> =>
  e.code === 'topologyInvalid' && e.problems?.length ? { errors: e.problems.map(({ pointer, message }) => ({ pointer, message })) } : {};

/**
 * B: the management system's REST error `{code, message, errors?, referer?, kind}`; `referer` is the
 * client's address, as the real product says it (never a piece of the request beyond a bounded name).
 */
export const renderTopologyError: ErrorRenderer = (e, { remoteAddress }) => ({
  status: statusOf(e),
  body: {
    code: statusOf(e),
    message: e.message,
    ...listed(e),
    ...(remoteAddress ? { referer: remoteAddress } : {}),
    kind: ':resterrorresponse',
  } satisfies RestError,
});
