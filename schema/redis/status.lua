-- status: what `orchestrator accounts list` and the admin side show for one account: per action,
-- calls taken today and in the rolling week, the first day (ramp-up), and the cooldown and
-- pacing waits left; and the API key's cooldown. Read-only.
-- KEYS[1] key scope hash   KEYS[2..] account+action hashes (one per action asked)
-- ARGV[1] day (local day number of the counters)
-- Returns {key_cooldown_ms, key_streak, {today, week, first (-1 = none), cooldown_ms, pace_ms, streak}...}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local day = tonumber(ARGV[1])
local function left(v) return math.max(0, (tonumber(v) or 0) - now) end
local function live_streak(h)
    if (tonumber(h[3]) or 0) > now then return tonumber(h[2]) or 0 end
    return 0
end
local ks = redis.call('HMGET', KEYS[1], 'tat', 'until', 'streak', 'streak_until')
local out = {left(ks[2]), live_streak({ks[2], ks[3], ks[4]})}
local fields = {'until', 'streak', 'streak_until', 'pace', 'first'}
for i = 6, 0, -1 do fields[#fields + 1] = 'd' .. (day - i) end
for k = 2, #KEYS do
    local a = redis.call('HMGET', KEYS[k], unpack(fields))
    local week = 0
    for i = 6, 12 do week = week + (tonumber(a[i]) or 0) end
    out[#out + 1] = {tonumber(a[12]) or 0, week, tonumber(a[5]) or -1, left(a[1]), left(a[4]),
                     live_streak(a)}
end
return out
