import type * as F from '../../../generated/device-config/types.gen.ts';
import type { TypedHandler } from '../../server/handler-types.ts';
import { collectDeviceSnapshot, packSnapshot, type SnapshotSources } from './snapshot-source.ts';

/** The device's diagnostic snapshot (designed): the archive is streamed as the body. */
export function createSnapshotHandlers(deps: { sources: SnapshotSources }) {
  const getDeviceSnapshot: TypedHandler<F.GetDeviceSnapshotData, F.GetDeviceSnapshotResponses, F.GetDeviceSnapshotErrors> = async ({
    query,
  }) => {
    // Read before the answer starts: a store failure is still a clean error answer, not a cut stream.
    const snapshot = await collectDeviceSnapshot(deps.sources, undefined, query?.layout ?? 'portolan-snapshot');
    return {
      status: 200,
      contentType: 'application/gzip',
      headers: { 'content-disposition': `attachment; filename="${snapshot.fileName}"`, 'cache-control': 'no-store' },
      // The spec types a binary body as Blob; the adapter streams a Readable.
      body: packSnapshot(snapshot) as unknown as F.DeviceSnapshotArchive,
    };
  };
  return { getDeviceSnapshot };
}
