-- cooldown: the API answered RATE_LIMITED; the whole scope (the API key, or one account and
-- action) waits. Every worker honours it at once: take reads `until` of both scopes.
-- The wait is Retry-After when the API sent one, else full-jitter exponential backoff on the
-- scope's hit streak: uniform in [0, min(cap, base * 2^streak)], at least min_ms. The streak
-- grows with each hit, is forgotten idle_ttl_ms after the cooldown ends and is reset by a success
-- (limiter::succeeded deletes streak and streak_until). An existing longer cooldown is kept.
-- KEYS[1] the scope hash (the key scope or the account+action hash of take.lua)
-- ARGV[1] retry_after_ms (-1 = none)   ARGV[2] base_ms   ARGV[3] cap_ms   ARGV[4] min_ms
-- ARGV[5] jitter in [0, 1) drawn by the caller   ARGV[6] idle_ttl_ms
-- Returns {cooldown_ms (from now to the scope's end), streak}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local retry_after = tonumber(ARGV[1])
local base = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local min_ms = tonumber(ARGV[4])
local jitter = tonumber(ARGV[5])
local idle = tonumber(ARGV[6])
local s = redis.call('HMGET', KEYS[1], 'until', 'streak', 'streak_until')
local streak = 0
if (tonumber(s[3]) or 0) > now then streak = tonumber(s[2]) or 0 end
local delay
if retry_after >= 0 then
    delay = retry_after
else
    local ceiling = cap
    if streak < 40 then ceiling = math.min(cap, base * 2 ^ streak) end
    delay = math.max(min_ms, math.floor(jitter * ceiling))
end
streak = streak + 1
local ends = math.max(tonumber(s[1]) or 0, now + delay)
redis.call('HSET', KEYS[1], 'until', string.format('%.0f', ends), 'streak', streak,
           'streak_until', string.format('%.0f', ends + idle))
if redis.call('PTTL', KEYS[1]) < ends - now + idle then redis.call('PEXPIRE', KEYS[1], ends - now + idle) end
return {ends - now, streak}
