import type t from 'tap';

/** The type of a tap subtest's `t`, for test helpers that take one. */
export type TapTest = Parameters<Parameters<typeof t.test>[0]>[0];
