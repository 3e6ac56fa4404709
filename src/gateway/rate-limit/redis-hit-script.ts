/**
 * One hit, atomic in Redis (a script runs alone). KEYS[1] is the counter key, a hash
 * { count, expires }; ARGV: now (ms, the caller's clock), limit, the expiry of a new window (ms),
 * and the key's time to live in Redis (ms). `expires` is the truth: the window is compared with the
 * caller's clock, so a fake clock in tests and a slightly skewed server clock both work. The TTL
 * (window plus a grace) only lets Redis drop keys nobody uses any more; it is relative so a caller
 * clock far from the server's never makes Redis drop a live key early.
 * Returns { counted (1/0), count, expires }.
 */
export const HIT_SCRIPT = `
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local entry = redis.call('HMGET', KEYS[1], 'count', 'expires')
local count = tonumber(entry[1])
local expires = tonumber(entry[2])
if count == nil or expires == nil or expires <= now then
  redis.call('HSET', KEYS[1], 'count', 1, 'expires', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return {1, 1, ARGV[3]}
end
if count < limit then
  return {1, redis.call('HINCRBY', KEYS[1], 'count', 1), entry[2]}
end
return {0, count, entry[2]}
`;
