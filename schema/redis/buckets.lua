-- buckets: the rate-limit buckets of engine/limits (limits.hpp), one script for every operation
-- so that they share one record format; ARGV[1] names the operation:
--   take      check and take, atomically, everything one API call needs (the hot path)
--   cooldown  RATE_LIMITED: set the cooldown of a scope (Retry-After, or backoff on its streak)
--   reset     a success: forget the hit streaks
--   refund    a taken call surely had no effect: give back its place in the day's counters
--   unsend    a taken call will not be sent after all: as refund, and its request-rate place and
--             its pacing gap too
--   status    what `accounts list` and the admin side show
--   seed      writes back the counts the database records, into a Redis that lost them
--   cooldowns every scope cooling down now, from the index the cooldown op keeps (the workers'
--             send-time mirrors read it in one call, however many accounts there are)
--   queue     turns for the key's places, one queue shared by every worker (engine/limits_gate)
--   line      the operators' commands waiting for the key's places, in the order they asked
--
-- Times (rate, cooldowns, pacing) come from Redis TIME, so every worker on every host agrees; the
-- caller passes only the local day number of the quota counters (days since 1970-01-01 in the
-- account's time zone, its quota day) and how long that day still lasts. Every key shares the API key's hash
-- tag, so one script may touch both scopes under Redis Cluster.
--
-- Records are fixed binary layouts of little-endian doubles (struct.pack): one MGET for both
-- scopes and one SET (with its TTL) per scope, and no field names to build, keep the take at 4
-- Redis calls (TIME, MGET, 2 SET). All values are integers below 2^53. Times are ms (tat: us).
--   key scope      KEY: tat, until, streak, streak_until, refreshed (when its TTL was last set;
--                  32-byte records of earlier versions, without it, read as refreshed 0)
--   account+action ACC: until, streak, streak_until, pace, first (-1 = unknown), slot0..slot7,
--                  ncamp; then ncamp CAMP records: campaign id, slot0..slot7
-- A day slot (index day % 8) holds day * 1e9 + count: a slot of another day counts 0, so old
-- days need no pruning; the slots day-6 .. day are the rolling week, and the slot of day+1 counts
-- as today's and the week's too: it holds calls only when the account's time zone moved west to
-- an earlier date, and those calls were made today (count()). Campaign records are
-- touched only when the check carries a campaign cap, and then only the record of that campaign
-- (updated in place); records whose slots are all older than the week are dropped when a new
-- campaign record is added (so they are bounded by the campaigns of the last week or so).
-- Every cost here is paid per check, so this script favours few Redis calls and few Lua
-- function calls (the % operator instead of math.floor, TTLs passed as strings).
local TAKE_ARGS, TAKE_ARGS_SIZE = '<i3i4i4i4i4i4i3i6i4i4i4i3i4i4i4i4', 63
local KEY, KEY_V1, KEY_SIZE = '<ddddd', '<dddd', 40
local ACC = '<dddddddddddddd'
local CAMP = '<ddddddddd'
local ACC_SIZE, CAMP_SIZE = 14 * 8, 9 * 8
local SLOT = 1000000000
local DAY_MS = 86400000
local pack, unpack_struct, max = struct.pack, struct.unpack, math.max

local t = redis.call('TIME')
local now_us = t[1] * 1000000 + t[2]  -- numeric strings coerce in arithmetic (cheaper than tonumber)
local now = (now_us - now_us % 1000) / 1000

local function decode_campaigns(tail)
    local camps = {}
    for pos = 1, #tail, CAMP_SIZE do camps[#camps + 1] = {unpack_struct(CAMP, tail, pos)} end
    return camps
end

local function encode_campaigns(camps)
    local parts = {}
    for i, c in ipairs(camps) do
        parts[i] = pack(CAMP, c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9])
    end
    return table.concat(parts)
end

-- The count of day d in slots starting at r[base] (0 when the slot holds another day).
local function slot_count(r, base, d)
    local v = r[base + d % 8]
    local n = v % SLOT
    if (v - n) / SLOT == d then return n end
    return 0
end

-- Today's count, the week's sum and the day's own count, of the slots starting at r[base]. Today
-- is the day's slot and the next day's (empty unless the account's time zone moved west a date,
-- see above); the week is the slots of day-6 .. day+1. A slot holds day d (d*SLOT + n, n < SLOT)
-- of those 8 days exactly when its value lies in [(day-6)*SLOT, (day+2)*SLOT), and no two slots
-- hold the same day, so one range test per slot replaces the per-day decoding.
local function count(r, base, day)
    local lo, top = (day - 6) * SLOT, (day + 2) * SLOT
    local week = 0
    for i = base, base + 7 do
        local v = r[i]
        if v >= lo and v < top then week = week + v % SLOT end
    end
    local own, later = 0, 0
    local v = r[base + day % 8]
    if v >= top - 2 * SLOT and v < top - SLOT then own = v % SLOT end
    v = r[base + (day + 1) % 8]
    if v >= top - SLOT and v < top then later = v % SLOT end
    return own + later, week, own
end

-- Campaign id's record (decoded) and its position in the bytes of the campaign records, or nil.
-- Only the id of the other records is decoded.
local function find_campaign(tail, id)
    for pos = 1, #tail, CAMP_SIZE do
        if unpack_struct('<d', tail, pos) == id then return {unpack_struct(CAMP, tail, pos)}, pos end
    end
    return nil, nil
end

-- When a rolling-week quota frees: the first later day whose window (that day and the 6 before)
-- holds fewer than `cap` calls, counting only the calls already taken.
local function week_wait(r, base, day, sum, cap, day_left)
    for k = 1, 7 do
        sum = sum - slot_count(r, base, day - 7 + k)  -- day-7+k leaves the window on day+k
        if sum < cap then return day_left + (k - 1) * DAY_MS end
    end
    return day_left + 6 * DAY_MS
end

local op = ARGV[1]

if op == 'take' then
    -- KEYS[1] key scope, KEYS[2] account+action, KEYS[3] the state's marker; ARGV[2] idle_ttl_ms (key scope) and ARGV[3]
    -- counters_ttl_ms (account record) as decimal strings, which SET takes as they are (a number
    -- would be formatted on every call); ARGV[4] the check's numbers packed as
    -- little-endian signed integers (TAKE_ARGS; limiter::take_command packs them): one argument
    -- unpacked by one C call instead of 16 arguments coerced from decimal strings, which cost
    -- Redis more than the rest of the script's arithmetic.
    --   day (i3), day_left_ms (i4), per_day (i4, -1 none), per_week (i4), ramp_start (i4, 0 none),
    --   ramp_step (i4), first_day (i3, -1: recorded here), campaign id (i6, 0 none), campaign
    --   per_day (i4, -1 none; a campaign's calls are counted only when it has a cap), campaign
    --   per_week (i4), window_ms (i4, 0 = no pacing), pace factor (i3, millionths),
    --   emission_us (i4, 0 = no rate bucket), burst (i4), idle_ttl_ms (i4, key scope),
    --   window_left_ms (i4, 0 = unknown: the gap is window / quota)
    -- Returns {allowed 0|1, reason, wait_ms, streaks (bit 1 key, bit 2 account), used_today, used_week};
    -- when allowed, as one integer instead (Redis converts a table reply at a cost of about a
    -- tenth of the whole take): streaks + 4 * used_today + 2^27 * used_week, with
    -- used_today < 2^25 and used_week < 2^26 (the table otherwise).
    -- reasons: 0 none, 1 rate, 2 cooldown_key, 3 cooldown_account, 4 day_quota, 5 week_quota,
    --          6 campaign_quota, 7 pacing, 8 the rate's place is a queued lead's, 9 the state's
    --          marker is missing (numbers shared with limits.cpp)
    local packed = ARGV[4]
    if #packed ~= TAKE_ARGS_SIZE then error('orch buckets: take arguments are ' .. #packed .. ' bytes, not ' .. TAKE_ARGS_SIZE) end
    local day, day_left, per_day, per_week, ramp_start, ramp_step, first_day, campaign, camp_day, camp_week,
          window, pace_micro, emission, burst, key_ttl, window_left = unpack_struct(TAKE_ARGS, packed)
    local wait, why = 0, 0
    local raws = redis.call('MGET', KEYS[1], KEYS[2])  -- both records in one call
    -- No account record: the account's first take of the action in 8 days, or Redis lost the
    -- counts (a flush, a restart without persistence), which the state's marker (KEYS[3],
    -- limiter::ensure_state) tells apart. Without the marker nothing is taken until the counts are
    -- written back, reason 9. Read only then: the take of a known account pays nothing for it.
    if not raws[2] and redis.call('EXISTS', KEYS[3]) == 0 then return {0, 9, 1000, 0, 0, 0} end

    -- Key scope: request rate (GCRA) and cooldown.
    local tat, key_until, key_streak, key_streak_until, refreshed = 0, 0, 0, 0, 0
    local key_raw = raws[1]
    if key_raw then
        if #key_raw == KEY_SIZE then
            tat, key_until, key_streak, key_streak_until, refreshed = unpack_struct(KEY, key_raw)
        elseif #key_raw == 32 then
            tat, key_until, key_streak, key_streak_until = unpack_struct(KEY_V1, key_raw)
        else
            error('orch buckets: bad key record ' .. KEYS[1])
        end
    end
    local new_tat = 0
    if emission > 0 then
        new_tat = max(tat, now_us) + emission
        local conforms_at = new_tat - emission * burst
        if conforms_at > now_us then
            local w = (conforms_at - now_us) / 1000
            wait, why = w - w % 1 + 1, 1
        end
    end
    if key_until - now > wait then wait, why = key_until - now, 2 end
    local streaks = 0
    if key_streak > 0 and key_streak_until > now then streaks = 1 end

    -- Account+action scope: cooldown, quotas with ramp-up, campaign cap, pacing.
    local a, tail = nil, ''
    local raw = raws[2]
    if raw then
        a = {unpack_struct(ACC, raw)}
        if #raw ~= ACC_SIZE + a[14] * CAMP_SIZE then error('orch buckets: bad account record ' .. KEYS[2]) end
        if a[14] > 0 then tail = string.sub(raw, ACC_SIZE + 1) end
    else
        a = {0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
    end
    if a[1] - now > wait then wait, why = a[1] - now, 3 end
    if a[2] > 0 and a[3] > now then streaks = streaks + 2 end
    local today, week, own = count(a, 6, day)
    local cap = per_day
    local first = a[5]
    if first_day >= 0 then first = first_day elseif first < 0 then first = day end
    if cap >= 0 and ramp_start > 0 then
        local ramped = ramp_start + ramp_step * max(0, day - first)
        if ramped < cap then cap = ramped end
    end
    if cap >= 0 and today >= cap and day_left > wait then wait, why = day_left, 4 end
    if per_week >= 0 and week >= per_week then
        local w = week_wait(a, 6, day, week, per_week, day_left)
        if w > wait then wait, why = w, 5 end
    end
    local capped = campaign > 0 and (camp_day >= 0 or camp_week >= 0)
    local camp_pos, camp, ctoday, cown = nil, nil, 0, 0
    if capped then
        camp, camp_pos = find_campaign(tail, campaign)
        local cweek = 0
        if camp then ctoday, cweek, cown = count(camp, 2, day) end
        if camp_day >= 0 and ctoday >= camp_day and day_left > wait then wait, why = day_left, 6 end
        if camp_week >= 0 and cweek >= camp_week then
            local w = camp and week_wait(camp, 2, day, cweek, camp_week, day_left) or day_left + 6 * DAY_MS
            if w > wait then wait, why = w, 6 end
        end
    end
    -- The pacing slot a paced take left binds only paced takes: a worker running without pacing
    -- (window 0) does not wait out the gap one with pacing set.
    if window > 0 and a[4] - now > wait then wait, why = a[4] - now, 7 end

    -- The key's queue of turns (engine/limits_gate: queue_at_end, key_places_owed), when the check
    -- names its lead (KEYS[4] the turns given and not yet taken, lead -> turn in us of Redis time;
    -- KEYS[5] the last 8 turns that passed, a set bit for one whose lead did not come within the
    -- grace; ARGV[5] the lead, [6] 1 due for the first time or 2 queued, [7] the grace in us, [8] how
    -- many of the 8 may be misses before first arrivals stop waiting for queued leads). Keeping a
    -- queued lead's place from first arrivals here, where every worker of the key sees it, and not
    -- in each process alone, is what keeps one process's first arrivals from the places another's
    -- queued leads come back for.
    if emission > 0 and KEYS[4] then
        local role = ARGV[6]
        if role == '2' then
            local turn = redis.call('ZSCORE', KEYS[4], ARGV[5])
            -- A lead back before its turn and denied for the rate keeps it; otherwise its turn is
            -- done with: taken, missed by the lead's lateness (it takes a turn ahead of the queue),
            -- or left for another wait.
            if turn and (wait == 0 or why ~= 1 or turn + 0 <= now_us) then
                redis.call('ZREM', KEYS[4], ARGV[5])
                if turn + 0 <= now_us then
                    local misses = (redis.call('GET', KEYS[5]) or 0) * 2 % 256
                    redis.call('SET', KEYS[5], string.format('%d', misses), 'PX', 660000)
                end
            end
        elseif role == '1' and wait == 0 then
            local gone = redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', string.format('(%.0f', now_us - ARGV[7]))
            local misses = redis.call('GET', KEYS[5]) or 0
            if gone > 0 then
                local shift = 2 ^ math.min(gone, 8)
                misses = (misses * shift + shift - 1) % 256
                redis.call('SET', KEYS[5], string.format('%d', misses), 'PX', 660000)
            end
            local missed, m = 0, misses + 0
            while m > 0 do
                missed, m = missed + m % 2, (m - m % 2) / 2
            end
            if missed <= ARGV[8] + 0 and
               #redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', string.format('%.0f', now_us), 'LIMIT', 0, 1) > 0 then
                local w = emission / 1000
                return {0, 8, w - w % 1 + 1, streaks, today, week}
            end
        end
    end

    if wait > 0 then return {0, why, wait, streaks, today, week} end

    -- Take.
    -- A SET with PX costs Redis more than one that keeps the TTL (it also rewrites the expiry for
    -- propagation), so a record's TTL is set again only when due: the key scope's when half of it
    -- has passed since it was last set, the account record's on its first take of a day (its TTL
    -- outlives the week its counters need). Both are set at once on a new record.
    if emission > 0 then
        if key_raw and (now - refreshed) * 2 < key_ttl then
            redis.call('SET', KEYS[1], pack(KEY, new_tat, key_until, key_streak, key_streak_until, refreshed), 'KEEPTTL')
        else
            redis.call('SET', KEYS[1], pack(KEY, new_tat, key_until, key_streak, key_streak_until, now), 'PX', ARGV[2])
        end
    end
    local keep_ttl = raw and own > 0
    a[6 + day % 8] = day * SLOT + own + 1
    if window > 0 and cap > 0 then
        -- The gap spreads the day quota over the window; with the time left in the window known
        -- (window_left), at most that time over the calls still allowed today plus one, so the rest of
        -- the quota fits inside what is left of the window.
        local base = window / cap
        if window_left > 0 then
            local fit = window_left / (max(0, cap - today - 1) + 1)
            if fit < base then base = fit end
        end
        local gap = base * pace_micro / 1000000
        a[4] = now + gap - gap % 1
    end
    if a[5] < 0 and first_day < 0 then a[5] = day end
    if capped then
        if camp then
            camp[2 + day % 8] = day * SLOT + cown + 1
            local record = pack(CAMP, camp[1], camp[2], camp[3], camp[4], camp[5], camp[6], camp[7], camp[8],
                                camp[9])
            if #tail == CAMP_SIZE then
                tail = record
            else
                tail = string.sub(tail, 1, camp_pos - 1) .. record .. string.sub(tail, camp_pos + CAMP_SIZE)
            end
        else
            local live = {}
            for _, c in ipairs(decode_campaigns(tail)) do
                local _, cweek = count(c, 2, day)
                if cweek > 0 then live[#live + 1] = c end
            end
            camp = {campaign, 0, 0, 0, 0, 0, 0, 0, 0}
            camp[2 + day % 8] = day * SLOT + 1
            live[#live + 1] = camp
            a[14] = #live
            tail = encode_campaigns(live)
        end
    end
    local record = pack(ACC, a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14]) .. tail
    if keep_ttl then
        redis.call('SET', KEYS[2], record, 'KEEPTTL')
    else
        redis.call('SET', KEYS[2], record, 'PX', ARGV[3])
    end
    if week + 1 < 67108864 then return streaks + 4 * (today + 1) + 134217728 * (week + 1) end
    return {1, 0, 0, streaks, today + 1, week + 1}
end

-- The other operations (not on the hot path) read and write records through these.
local function load_key(k)
    local raw = redis.call('GET', k)
    if not raw then return {0, 0, 0, 0, 0} end
    if #raw == KEY_SIZE then return {unpack_struct(KEY, raw)} end
    if #raw == 32 then
        local r = {unpack_struct(KEY_V1, raw)}
        r[5] = 0  -- (r[5] held unpack's next position)
        return r
    end
    error('orch buckets: bad key record ' .. k)
end

-- Sets the TTL: the record's refreshed time is now.
local function save_key(k, r, ttl)
    redis.call('SET', k, pack(KEY, r[1], r[2], r[3], r[4], now), 'PX', ttl)
end

-- The account record's 14 numbers, and its campaign records as bytes.
local function load_account(k)
    local raw = redis.call('GET', k)
    if not raw then return {0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, '' end
    local a = {unpack_struct(ACC, raw)}
    if #raw ~= ACC_SIZE + a[14] * CAMP_SIZE then error('orch buckets: bad account record ' .. k) end
    return a, string.sub(raw, ACC_SIZE + 1)
end

-- ttl: PX of the record; nil: keep the TTL it has.
local function save_account(k, a, tail, ttl)
    local raw = pack(ACC, a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
                     a[14]) .. tail
    if ttl then
        redis.call('SET', k, raw, 'PX', ttl)
    else
        redis.call('SET', k, raw, 'KEEPTTL')
    end
end

if op == 'cooldown' then
    -- KEYS[1] the scope's key; ARGV[2] 'key' or 'account', [3] retry_after_ms (-1 = none),
    -- [4] base_ms, [5] cap_ms, [6] min_ms, [7] jitter in [0, 1) drawn by the caller,
    -- [8] idle_ttl_ms (memory of the streak after the cooldown), [9] ttl_ms of the scope's record;
    -- with KEYS[2] (the cooldown index, a sorted set by end), [10] the scope's member in it
    -- The wait is Retry-After when given, else full-jitter exponential backoff on the streak:
    -- uniform in [0, min(cap, base * 2^streak)], at least min_ms. An existing longer cooldown is
    -- kept. Returns {cooldown_ms from now, streak}.
    local is_key = ARGV[2] == 'key'
    local r, tail
    if is_key then r = load_key(KEYS[1]) else r, tail = load_account(KEYS[1]) end
    local o = is_key and 1 or 0  -- until, streak, streak_until are r[o+1], r[o+2], r[o+3]
    local retry_after = tonumber(ARGV[3])
    local base, cap = tonumber(ARGV[4]), tonumber(ARGV[5])
    local idle = tonumber(ARGV[8])
    local streak = 0
    if r[o + 3] > now then streak = r[o + 2] end
    -- A hit that comes back while the scope is already cooling down answers a request that was
    -- let through before the cooldown began (take denies during one): the same episode as the
    -- hit that set it (e.g. the rest of a batch sent at once). It neither lengthens the streak
    -- nor re-draws the backoff, or one burst answered to 20 calls in flight would back off
    -- 2^20 times the base; a Retry-After still extends the cooldown when it ends later.
    local cooling = r[o + 1] > now
    local delay
    if retry_after >= 0 then
        delay = retry_after
    elseif cooling then
        delay = 0
    else
        local ceiling = cap
        if streak < 40 then ceiling = math.min(cap, base * 2 ^ streak) end
        delay = max(tonumber(ARGV[6]), math.floor(tonumber(ARGV[7]) * ceiling))
    end
    if not cooling then streak = streak + 1 end
    local ends = max(r[o + 1], now + delay)
    r[o + 1], r[o + 2], r[o + 3] = ends, streak, ends + idle
    local ttl = max(tonumber(ARGV[9]), ends - now + idle)
    if is_key then save_key(KEYS[1], r, ttl) else save_account(KEYS[1], r, tail, ttl) end
    if KEYS[2] then
        redis.call('ZADD', KEYS[2], ends, ARGV[10])
        redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - DAY_MS)
        redis.call('PEXPIRE', KEYS[2], max(DAY_MS, ends - now + DAY_MS))
    end
    return {ends - now, streak}
end

if op == 'reset' then
    -- KEYS[1] key scope, KEYS[2] account+action; ARGV[2] 1: reset the key's streak,
    -- ARGV[3] 1: the account's. Keeps the TTLs.
    if ARGV[2] == '1' then
        local r = load_key(KEYS[1])
        if r[3] > 0 then
            redis.call('SET', KEYS[1], pack(KEY, r[1], r[2], 0, 0, r[5]), 'KEEPTTL')
        end
    end
    if ARGV[3] == '1' then
        local a, tail = load_account(KEYS[2])
        if a[2] > 0 then
            a[2], a[3] = 0, 0
            save_account(KEYS[2], a, tail, nil)
        end
    end
    return 1
end

-- A call's place in the counters of `day` given back (refund, unsend): the account's, and campaign
-- id's when it is counted. Never below zero. Returns the account's record, its campaign records,
-- whether either changed, and the account's count of that day before.
local function give_back_place(key, day, campaign)
    local a, tail = load_account(key)
    local changed = false
    local n = slot_count(a, 6, day)
    if n > 0 then a[6 + day % 8], changed = day * SLOT + n - 1, true end
    if campaign > 0 and #tail > 0 then
        local camps = decode_campaigns(tail)
        for _, c in ipairs(camps) do
            local cn = slot_count(c, 2, day)
            if c[1] == campaign and cn > 0 then c[2 + day % 8], changed = day * SLOT + cn - 1, true end
        end
        tail = encode_campaigns(camps)
    end
    return a, tail, changed, n
end

if op == 'refund' then
    -- KEYS[1] account+action; ARGV[2] day, ARGV[3] campaign id (0 none). The rate bucket and the
    -- pacing gap are not refunded: the request was sent. Keeps the TTL.
    -- Returns the account's count of that day after the refund.
    local a, tail, changed, n = give_back_place(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
    if changed then save_account(KEYS[1], a, tail, nil) end
    return max(0, n - 1)
end

if op == 'unsend' then
    -- KEYS[1] account+action, KEYS[2] key scope; ARGV[2] day, ARGV[3] campaign id (0 none), ARGV[4]
    -- emission_us of the key's rate bucket (0 none), ARGV[5] 1 when the take was paced, ARGV[6] the
    -- key scope's idle TTL (ms). The take's call will not be made (the ledger refused it, or its
    -- cycle rolled back: engine/limits_gate released): no request left, so nothing of the take is
    -- kept. As refund for the counters; the rate bucket's TAT moves back one emission interval
    -- (never before now), and a paced take's pacing end, when still ahead, becomes now. That end
    -- is this take's: a paced take is allowed only once the last one's end has passed, and it sets
    -- a new one, so no paced take came after it while it is ahead; an unpaced take sets none.
    -- Returns the account's count of that day after the refund.
    local emission, paced = tonumber(ARGV[4]), ARGV[5] == '1'
    local a, tail, changed, n = give_back_place(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
    if paced and a[4] > now then a[4], changed = now, true end
    if changed then save_account(KEYS[1], a, tail, nil) end
    if emission > 0 and redis.call('EXISTS', KEYS[2]) == 1 then
        local k = load_key(KEYS[2])
        if k[1] > now_us then
            k[1] = max(now_us, k[1] - emission)
            save_key(KEYS[2], k, ARGV[6])
        end
    end
    return max(0, n - 1)
end

if op == 'queue' then
    -- KEYS[1] the end of the key's queue of turns (us, Redis time: the first turn not given yet),
    -- KEYS[2] the turns given and not yet taken (lead -> turn; the take's KEYS[4]); ARGV[2] the
    -- turns wanted, [3] us from now until the key's rate frees its next place, [4] the rate's
    -- emission interval (us), [5] how far ahead the queue may reach (us), [6..] the leads, in
    -- order. Turns are one interval apart from the later of the next place and the queue's end,
    -- as many as fit in the reach. Returns {us from now to the first turn, turns given}.
    local n, free, interval, reach = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
    local start = max(now_us + free, tonumber(redis.call('GET', KEYS[1]) or '0'))
    local fit = (now_us + reach - start) / interval
    local k = math.min(n, max(0, fit - fit % 1 + 1))
    if start > now_us + reach then k = 0 end
    if k > 0 then
        local ttl = string.format('%.0f', (reach - reach % 1000) / 1000 + 60000)
        redis.call('SET', KEYS[1], string.format('%.0f', start + k * interval), 'PX', ttl)
        if KEYS[2] and ARGV[6] then
            local owed = {}
            for i = 1, math.min(k, #ARGV - 5) do
                owed[#owed + 1] = string.format('%.0f', start + (i - 1) * interval)
                owed[#owed + 1] = ARGV[5 + i]
                if #owed == 1000 then  -- unpack's arguments stay well inside Lua's stack
                    redis.call('ZADD', KEYS[2], unpack(owed))
                    owed = {}
                end
            end
            if #owed > 0 then redis.call('ZADD', KEYS[2], unpack(owed)) end
            redis.call('PEXPIRE', KEYS[2], ttl)
        end
    end
    return {start - now_us, k}
end

if op == 'line' then
    -- KEYS[1] the tickets of the commands in line (a sorted set: score and member the ticket),
    -- KEYS[2] when each ticket's holder last said it still waits (ticket -> ms, a hash), KEYS[3]
    -- the last ticket given. ARGV[2] the ticket (0: a new one, at the end of the line), [3] how
    -- long a ticket stays in line without word from its holder (ms; a command killed while it
    -- waits holds the others up no longer), [4] '1' to leave the line. Returns {the ticket, the
    -- tickets ahead of it still in line} ({ticket, 0} after leaving).
    local ticket, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
    if ARGV[4] == '1' then
        redis.call('ZREM', KEYS[1], ARGV[2])
        redis.call('HDEL', KEYS[2], ARGV[2])
        return {ticket, 0}
    end
    if ticket == 0 then ticket = redis.call('INCR', KEYS[3]) end
    -- Added again at each word: a holder silent for longer than the ttl (a stopped process), or
    -- the line lost with a restarted Redis, gets its place back.
    redis.call('ZADD', KEYS[1], ticket, ticket)
    redis.call('HSET', KEYS[2], ticket, now)
    local ahead = 0
    for _, t in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ticket)) do
        local seen = tonumber(redis.call('HGET', KEYS[2], t) or '0')
        if now - seen > ttl then
            redis.call('ZREM', KEYS[1], t)
            redis.call('HDEL', KEYS[2], t)
        else
            ahead = ahead + 1
        end
    end
    local keep = string.format('%.0f', ttl + 3600000)
    for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], keep) end
    return {ticket, ahead}
end

if op == 'cooldowns' then
    -- KEYS[1] the cooldown index. Read-only. Returns {member, ms left, member, ms left, ...} of
    -- the scopes whose cooldown ends after now.
    local r = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
    for i = 2, #r, 2 do r[i] = tonumber(r[i]) - now end
    return r
end

if op == 'seed' then
    -- KEYS[1] account+action; ARGV[2] counters_ttl_ms, ARGV[3] the first day of the account's calls
    -- (-1 unknown), ARGV[4] how many (day, calls) pairs follow, then the pairs, then (campaign id,
    -- day, calls) triples to the end. What the database records of a Redis that lost the counts
    -- (limiter::ensure_state): each day's count becomes the larger of the record's and Redis's (a
    -- take made since the loss is in one, or in both), the campaigns' alike; days outside the
    -- rolling week and the day after are left out. Returns the record's week count of the day given
    -- last, for the log.
    local a, tail = load_account(KEYS[1])
    local first = tonumber(ARGV[3])
    if first >= 0 and (a[5] < 0 or first < a[5]) then a[5] = first end
    local n = tonumber(ARGV[4])
    local newest = 0
    for i = 0, n - 1 do
        local d, calls = tonumber(ARGV[5 + 2 * i]), tonumber(ARGV[6 + 2 * i])
        if d > newest then newest = d end
    end
    local function merge(r, base, d, calls)
        if d < newest - 7 or d > newest + 1 then return end
        local have = slot_count(r, base, d)
        local v = r[base + d % 8]
        -- the slot holds another day: only an older one may give way
        if have == 0 and v >= (d + 1) * SLOT then return end
        if calls > have then r[base + d % 8] = d * SLOT + calls end
    end
    for i = 0, n - 1 do merge(a, 6, tonumber(ARGV[5 + 2 * i]), tonumber(ARGV[6 + 2 * i])) end
    local camps = decode_campaigns(tail)
    for i = 5 + 2 * n, #ARGV - 2, 3 do
        local id, d, calls = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
        local c = nil
        for _, x in ipairs(camps) do if x[1] == id then c = x end end
        if not c then
            c = {id, 0, 0, 0, 0, 0, 0, 0, 0}
            camps[#camps + 1] = c
        end
        merge(c, 2, d, calls)
    end
    a[14] = #camps
    save_account(KEYS[1], a, encode_campaigns(camps), ARGV[2])
    local _, week = count(a, 6, newest)
    return week
end

if op == 'status' then
    -- KEYS[1] key scope, KEYS[2..] account+action records; ARGV[2] day. Read-only.
    -- Returns {key_cooldown_ms, key_streak, {today, week, first (-1), cooldown_ms, pace_ms, streak}...}
    local day = tonumber(ARGV[2])
    local ks = load_key(KEYS[1])
    local out = {max(0, ks[2] - now), 0}
    if ks[4] > now then out[2] = ks[3] end
    for i = 2, #KEYS do
        local a = load_account(KEYS[i])
        local today, week = count(a, 6, day)
        local streak = 0
        if a[3] > now then streak = a[2] end
        out[#out + 1] = {today, week, a[5], max(0, a[1] - now), max(0, a[4] - now), streak}
    end
    return out
end

return redis.error_reply('orch buckets: unknown operation ' .. tostring(op))
