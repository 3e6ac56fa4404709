import type * as F from '../../../generated/device-config/types.gen.ts';
import type { TypedHandler } from '../../server/handler-types.ts';
import type { PairStatus } from './device-pair.ts';
import { DEVICE_VERSION } from './device-version.ts';

const BASE = 'https://localhost/mgmt/tm/cm';
const TRAFFIC_GROUP = '/Common/traffic-group-1';

type FailoverStatus = F.GetFailoverStatusResponses[200];

/** One `details` line of the nested statistics, numbered like the real device's. */
const detail = (n: number, description: string) => [
  `${BASE}/failoverStatus/0/details/${n}`,
  { nestedStats: { entries: { details: { description } } } },
];

/** The user information of a URL is never shown. */
const shown = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
};

/** The failover status body (after the real device's) of a process in `status`. */
export function failoverStatusBody(status: PairStatus): FailoverStatus {
  const active = status.role === 'active';
  const activeUrl = status.activeUrl === undefined ? undefined : shown(status.activeUrl);
  const details = Object.fromEntries([
    detail(0, `${active ? 'active' : 'standby'} for ${TRAFFIC_GROUP}`),
    ...(activeUrl ? [detail(1, `active device ${activeUrl}`)] : []),
  ]);
  return {
    kind: 'tm:cm:failover-status:failover-statusstats',
    selfLink: `${BASE}/failover-status?ver=${DEVICE_VERSION}`,
    entries: {
      [`${BASE}/failover-status/0`]: {
        nestedStats: {
          entries: {
            color: { description: active ? 'green' : 'gray' },
            [`${BASE}/failoverStatus/0/details`]: { nestedStats: { entries: details } },
            status: { description: active ? 'ACTIVE' : 'STANDBY' },
            summary: { description: active ? '1/1 active' : '0/1 active' },
          },
        },
      },
    },
  };
}

/** `GET /mgmt/tm/cm/failover-status`: whether this device process is the active or the standby one of its pair. */
export function createFailoverHandlers(deps: { status(): PairStatus }) {
  const getFailoverStatus: TypedHandler<F.GetFailoverStatusData, F.GetFailoverStatusResponses, F.GetFailoverStatusErrors> = () => ({
    status: 200,
    body: failoverStatusBody(deps.status()),
  });
  return { getFailoverStatus };
}
