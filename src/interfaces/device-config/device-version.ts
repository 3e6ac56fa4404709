/** The device software version the REST answers as (selfLinks' `?ver=`, device-info): the real product's 16.1 line. */
export const DEVICE_VERSION = '16.1.0';

/**
 * The declarative deployment extension this device answers as (`/mgmt/shared/appsvcs/info`): the real
 * extension's current release, whose declarations (`schemaVersion` 3.0.0 to 3.56.0) it accepts.
 */
export const APPSVCS_INFO = { version: '3.56.0', release: '5', schemaCurrent: '3.56.0', schemaMinimum: '3.0.0' } as const;
