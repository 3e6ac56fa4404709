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

/**
 * The hits of one turn of the event loop in one script call: still atomic hit by hit (the script runs
 * alone), in order, with one round trip and one script run for the batch. KEYS are the counter keys;
 * ARGV: limit, the keys' time to live (ms), then per key its caller's now (ms) and the expiry of a new
 * window (ms). Returns { counted, count, expires } per key, flat, in KEYS order; a hit that failed alone
 * (its key holds another type, a write was refused) is { -1, 0, the error } and leaves the others standing.
 */
export const HIT_BATCH_SCRIPT = `
local limit = tonumber(ARGV[1])
local ttl = ARGV[2]
local replies = {}
local function hit(key, now, fresh)
  local entry = redis.call('HMGET', key, 'count', 'expires')
  local count = tonumber(entry[1])
  local expires = tonumber(entry[2])
  if count == nil or expires == nil or expires <= now then
    redis.call('HSET', key, 'count', 1, 'expires', fresh)
    redis.call('PEXPIRE', key, ttl)
    return 1, 1, fresh
  elseif count < limit then
    return 1, redis.call('HINCRBY', key, 'count', 1), entry[2]
  end
  return 0, count, entry[2]
end
for i, key in ipairs(KEYS) do
  local ok, counted, count, expires = pcall(hit, key, tonumber(ARGV[1 + 2 * i]), ARGV[2 + 2 * i])
  if ok then
    replies[#replies + 1] = counted
    replies[#replies + 1] = count
    replies[#replies + 1] = expires
  else
    -- This hit alone failed (a key of another type, a write refused): the others stand.
    replies[#replies + 1] = -1
    replies[#replies + 1] = 0
    replies[#replies + 1] = type(counted) == 'table' and counted.err or tostring(counted)
  end
end
return replies
`;
