-- await_lanes: the lanes' lock (engine/lane_enter) exclusively, until the transaction ends: it is
-- granted once every lane transaction that holds it has ended, and lane transactions that begin
-- meanwhile wait for this one. Take it holding no other lock (lanes that wait for it hold their
-- gate only), and end the transaction soon. A lane transaction takes milliseconds; one that holds
-- the lock for 10 s is stalled, and the caller gives up (lock_not_available) rather than hold every
-- lane behind it.
SET LOCAL lock_timeout = '10s';
SELECT pg_advisory_xact_lock(727100003);
