/** The device software version the REST answers as (selfLinks' `?ver=`, device-info): the real product's 16.1 line. */
export const DEVICE_VERSION = '16.1.0';
