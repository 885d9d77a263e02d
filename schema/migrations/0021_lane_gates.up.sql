-- Admission of the workers' lane transactions (engine/pg_lane_store.cpp, the lane gate).
--
-- Each lane of each worker process runs its cycles (settle, claim, plan, ledger, write) in
-- transactions of its own connection. With more lanes than the database's cores can run, the
-- transactions took turns on the CPU while holding row locks: each took longer, others waited
-- on its rows (the campaigns' ledger balances), and Postgres spent more CPU per transition the
-- more lanes ran: +12 to +17 % from 3 lanes to 12 in tests/bench/scale_bench.sh.
--
-- Now a lane's transaction first enters one of `lane_transaction_slots` gates (the worker setting):
-- a transaction-scoped advisory lock, gate = the lane's claim slot (engine/claim_slot, unique in
-- the database) modulo the gates, so lanes of every process spread evenly over them. At most that
-- many lane transactions run at once in the database, whatever the lanes and processes; the
-- rest wait in the lock queue, holding nothing (the gate is their transaction's first lock, so a
-- waiting lane is never part of a deadlock). The lock goes with the commit or rollback.
--
-- lane_gate_enter(gate, wait_ms): true once the gate is held; false when it was not free within
-- wait_ms (a transaction that holds it for that long is stalled, or very slow): the lane then goes
-- on without it rather than stall behind it. lock_timeout is set for the wait only (restored after;
-- an exception block reverts it on the timeout).
CREATE OR REPLACE FUNCTION lane_gate_enter(gate integer, wait_ms integer) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    before text := current_setting('lock_timeout');
BEGIN
    PERFORM set_config('lock_timeout', wait_ms || 'ms', true);
    PERFORM pg_advisory_xact_lock(727100021, gate);
    PERFORM set_config('lock_timeout', before, true);
    RETURN true;
EXCEPTION WHEN lock_not_available THEN
    RETURN false;
END
$$;
