-- refund: a call taken by take.lua surely had no effect (RATE_LIMITED, a refusal before any
-- action); give its place back in today's counters. The rate bucket and the pacing gap are not
-- refunded: the request was sent. Never goes below zero.
-- KEYS[1] account+action hash   KEYS[2] campaign+account+action hash
-- ARGV[1] day   ARGV[2] 1: refund the campaign counter too
-- Returns the account's count of that day after the refund.
local f = 'd' .. ARGV[1]
local function down(key)
    local n = tonumber(redis.call('HGET', key, f) or '0') or 0
    if n > 0 then
        redis.call('HSET', key, f, n - 1)
        return n - 1
    end
    return 0
end
local left = down(KEYS[1])
if ARGV[2] == '1' then down(KEYS[2]) end
return left
