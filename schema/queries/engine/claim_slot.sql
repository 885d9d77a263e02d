-- claim_slot(): the lowest claim slot (0-63) no other session of this database holds, held by this
-- lane's session until it ends (a session advisory lock: a crashed worker's slots free themselves).
-- Lane slots start the sweeps over the slices of the due work (migration 0019) spread evenly
-- whatever the number of lanes and processes: slot k starts at slice bit-reverse(k), i.e. 0, 32,
-- 16, 48, 8, 40, ... (engine/pg_lane_store.cpp, start_sweep). No row when all 64 are held.
SELECT s FROM generate_series(0, 63) AS s WHERE pg_try_advisory_lock(727100019, s) LIMIT 1;
