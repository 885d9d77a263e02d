-- lane_enter($1 gates, 0 for none, $2 the lane's preferred gate, $3 how long to queue for it, in
-- ms): a lane transaction's first statement.
-- 1. The lane gate (migration 0021): the gate it holds until the transaction ends, or -1 when none
--    was free in time (the lane goes on without one) or the worker runs without gates.
-- 2. Then the lanes' shared lock (advisory key 727100003), held until the transaction ends. A
--    lane transaction reads the budget caps of its leads' campaigns and the quotas of their
--    accounts, and writes the waits they cause, in one transaction (engine/pg_lane_store.cpp). A
--    budget or quota change, once committed, takes this lock exclusively (engine/await_lanes) to
--    wait for the lane transactions that began before it and may have read the old numbers, then
--    wakes the waits they wrote (engine/store.cpp, wake_after_lanes). Taken after the gate, so a
--    lane that queues for a gate holds nothing a change waits for.
SELECT CASE WHEN $1::integer > 0 THEN lane_gate_enter($1::integer, $2::integer, $3::integer) ELSE -1 END,
       pg_advisory_xact_lock_shared(727100003);
