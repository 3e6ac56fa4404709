// The rate limiter of interface E (per-token request counting at the gateway), as a library.
export { createRateLimiter } from './rate-limiter.ts';
export type { Decision, RateLimiter, RateLimiterOptions, StatusResult } from './rate-limiter.ts';
export { authorizationFields, counterKey, MAX_TOKEN_LENGTH, readBearerToken } from './token.ts';
export type { BearerReading } from './token.ts';
export { parseStoreUrl } from './store-url.ts';
export type { StoreLocation } from './store-url.ts';
export { OUTAGE_POLICIES } from './store-guard.ts';
export type { OutagePolicy } from './store-guard.ts';
export { createMemoryStore } from './memory-store.ts';
export { createSqliteStore } from './sqlite-store.ts';
export type { CounterEntry, CounterRule, CounterStore, HitResult, PingResult } from './counter-store.ts';
