-- Reference for tests/bench/limits_bench.sh: a minimal GCRA rate limiter (TIME, GET, SET PX),
-- the kind of script the "about 119,000/s pipelined" figure refers to. KEYS[1] the bucket,
-- ARGV[1] emission interval (us), ARGV[2] burst. Not used by the product.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
tat = math.max(tat, now)
local new_tat = tat + emission
if new_tat - emission * burst > now then return {0, new_tat - emission * burst - now} end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
return {1, 0}
