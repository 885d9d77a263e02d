-- take: checks and takes, atomically and in one round trip, everything one API call needs
-- (engine/limits/limits.hpp). All or nothing: when anything denies, nothing is written and the
-- answer is the longest of the waits, i.e. the earliest time a retry can succeed, with its reason.
--
-- Times come from Redis TIME, so every worker on every host agrees; the caller passes only the
-- local day number of the quota counters (days since 1970-01-01 in the campaign's time zone) and
-- how long that day still lasts. Every key shares the API key's hash tag (Redis Cluster: one slot).
--
-- KEYS[1] key scope hash:     tat (GCRA theoretical arrival time, us), until (cooldown end, ms),
--                             streak (RATE_LIMITED hits in a row), streak_until (ms)
-- KEYS[2] account+action hash: d<day> (calls taken that local day), pace (ms: next call allowed),
--                             first (first day this account took this action: ramp-up),
--                             until, streak, streak_until (cooldown of this scope, as above)
-- KEYS[3] campaign+account+action hash: d<day> (calls this campaign took on this account)
-- ARGV[1]  day                 local day number of the counters
-- ARGV[2]  day_left_ms         ms until that local day ends (when a day quota frees)
-- ARGV[3]  per_day             account quota for the action, -1 = none
-- ARGV[4]  per_week            rolling 7-day quota (this day and the 6 before), -1 = none
-- ARGV[5]  ramp_start          day quota on the first day (0 = no ramp-up)
-- ARGV[6]  ramp_step           added per day since the first day
-- ARGV[7]  first_day           the account's first day from the caller, -1 = recorded here
-- ARGV[8]  campaign_per_day    campaign cap on this account, -1 = none
-- ARGV[9]  campaign_per_week   -1 = none
-- ARGV[10] window_ms           working window of the day (pacing: gap = window / day quota), 0 = none
-- ARGV[11] pace_factor         random factor of this gap (e.g. 0.5..1.5), chosen by the caller
-- ARGV[12] emission_us         key request rate: us between requests (GCRA), 0 = no rate bucket
-- ARGV[13] burst               requests allowed at once
-- ARGV[14] idle_ttl_ms         expiry of the key scope hash when idle
-- ARGV[15] counters_ttl_ms     expiry of the day counters when idle (> 7 days)
-- ARGV[16] count_campaign      1: count in KEYS[3] (a campaign id was given)
-- Returns {allowed 0|1, reason, wait_ms, streaks (bit 1: key, bit 2: account), used_today, used_week}
-- reasons: 0 none, 1 rate, 2 cooldown_key, 3 cooldown_account, 4 day_quota, 5 week_quota,
--          6 campaign_quota, 7 pacing (numbers shared with limits.cpp)
local t = redis.call('TIME')
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now = math.floor(now_us / 1000)
local day = tonumber(ARGV[1])
local day_left = tonumber(ARGV[2])
local per_day = tonumber(ARGV[3])
local per_week = tonumber(ARGV[4])
local ramp_start = tonumber(ARGV[5])
local ramp_step = tonumber(ARGV[6])
local first_day = tonumber(ARGV[7])
local camp_day = tonumber(ARGV[8])
local camp_week = tonumber(ARGV[9])
local window = tonumber(ARGV[10])
local pace_factor = tonumber(ARGV[11])
local emission = tonumber(ARGV[12])
local burst = tonumber(ARGV[13])
local DAY_MS = 86400000

local wait, why = 0, 0
local function deny(ms, code)
    if ms > wait then wait, why = ms, code end
end

-- When a rolling-week quota frees: the first later day whose window (that day and the 6 before)
-- holds fewer than `cap` calls, counting only the calls already taken. counts[1..7] are the days
-- day-6 .. day; on day+k the days day-6 .. day-7+k have left the window.
local function week_wait(counts, sum, cap)
    for k = 1, 7 do
        sum = sum - counts[k]
        if sum < cap then return day_left + (k - 1) * DAY_MS end
    end
    return day_left + 6 * DAY_MS
end

-- Key scope: request rate (GCRA) and cooldown.
local ks = redis.call('HMGET', KEYS[1], 'tat', 'until', 'streak', 'streak_until')
local new_tat = 0
if emission > 0 then
    new_tat = math.max(tonumber(ks[1]) or 0, now_us) + emission
    local conforms_at = new_tat - emission * burst
    if conforms_at > now_us then deny(math.ceil((conforms_at - now_us) / 1000), 1) end
end
local key_until = tonumber(ks[2]) or 0
if key_until > now then deny(key_until - now, 2) end
local streaks = 0
if (tonumber(ks[3]) or 0) > 0 and (tonumber(ks[4]) or 0) > now then streaks = 1 end

-- Account+action scope: cooldown, quotas with ramp-up, pacing.
local fields = {'until', 'streak', 'streak_until', 'pace', 'first'}
for i = 6, 0, -1 do fields[#fields + 1] = 'd' .. (day - i) end
local as = redis.call('HMGET', KEYS[2], unpack(fields))
local acc_until = tonumber(as[1]) or 0
if acc_until > now then deny(acc_until - now, 3) end
if (tonumber(as[2]) or 0) > 0 and (tonumber(as[3]) or 0) > now then streaks = streaks + 2 end
local counts, week = {}, 0
for i = 1, 7 do
    counts[i] = tonumber(as[5 + i]) or 0
    week = week + counts[i]
end
local today = counts[7]
local record_first = false
local cap = per_day
if cap >= 0 and ramp_start > 0 then
    local first = first_day
    if first < 0 then
        first = tonumber(as[5])
        if first == nil then first, record_first = day, true end
    end
    local ramped = ramp_start + ramp_step * math.max(0, day - first)
    if ramped < cap then cap = ramped end
end
if cap >= 0 and today >= cap then deny(day_left, 4) end
if per_week >= 0 and week >= per_week then deny(week_wait(counts, week, per_week), 5) end
local pace = tonumber(as[4]) or 0
if pace > now then deny(pace - now, 7) end

-- Campaign cap on this account.
local camp_counts, camp_week_sum = nil, 0
if camp_day >= 0 or camp_week >= 0 then
    local cf = {}
    for i = 6, 0, -1 do cf[#cf + 1] = 'd' .. (day - i) end
    local cs = redis.call('HMGET', KEYS[3], unpack(cf))
    camp_counts = {}
    for i = 1, 7 do
        camp_counts[i] = tonumber(cs[i]) or 0
        camp_week_sum = camp_week_sum + camp_counts[i]
    end
    if camp_day >= 0 and camp_counts[7] >= camp_day then deny(day_left, 6) end
    if camp_week >= 0 and camp_week_sum >= camp_week then
        deny(week_wait(camp_counts, camp_week_sum, camp_week), 6)
    end
end

if wait > 0 then return {0, why, wait, streaks, today, week} end

-- Take. Day fields older than the window are dropped when a hash grows past its usual size
-- (until, streak, streak_until, pace, first and 8 days), so an always-busy hash stays small.
local function prune(key, keep_from)
    if redis.call('HLEN', key) <= 13 then return end
    local all = redis.call('HKEYS', key)
    for _, f in ipairs(all) do
        local d = string.match(f, '^d(%-?%d+)$')
        if d and tonumber(d) < keep_from then redis.call('HDEL', key, f) end
    end
end

if emission > 0 then
    redis.call('HSET', KEYS[1], 'tat', string.format('%.0f', new_tat))
    redis.call('PEXPIRE', KEYS[1], ARGV[14])
end
local counters_ttl = tonumber(ARGV[15])
local updates = {'d' .. day, today + 1}
if window > 0 and cap > 0 then
    local gap = math.floor(window / cap * pace_factor)
    updates[#updates + 1] = 'pace'
    updates[#updates + 1] = string.format('%.0f', now + gap)
end
if record_first then
    updates[#updates + 1] = 'first'
    updates[#updates + 1] = day
end
redis.call('HSET', KEYS[2], unpack(updates))
redis.call('PEXPIRE', KEYS[2], counters_ttl)
prune(KEYS[2], day - 7)
if ARGV[16] == '1' then
    redis.call('HINCRBY', KEYS[3], 'd' .. day, 1)
    redis.call('PEXPIRE', KEYS[3], counters_ttl)
    prune(KEYS[3], day - 7)
end
return {1, 0, 0, streaks, today + 1, week + 1}
