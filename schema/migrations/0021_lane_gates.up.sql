-- Admission of the workers' lane transactions (engine/pg_lane_store.cpp, the lane gate).
--
-- Each lane of each worker process runs its cycles (settle, claim, plan, ledger, write) in
-- transactions of its own connection. With more lanes than the database's cores can run, the
-- transactions took turns on the CPU while holding row locks: each took longer, others waited
-- on its rows (the campaigns' ledger balances), and Postgres spent more CPU per transition the
-- more lanes ran: +12 to +17 % from 3 lanes to 12 in tests/bench/scale_bench.sh.
--
-- Now a lane's transaction first enters one of `lane_transaction_slots` gates (the worker setting,
-- the same in every process: each process takes gates below its own value): transaction-scoped
-- advisory locks, released by the commit or rollback. The gates act as a semaphore: a lane takes
-- its preferred gate (its claim slot, engine/claim_slot, modulo the gates: lanes of every process
-- spread evenly) or else any free one; only when all are taken does it queue for its preferred
-- gate. The rest wait holding nothing (the gate is their transaction's first lock, so a waiting
-- lane is never part of a deadlock), and at most that many lane transactions run at once, but for
-- a lane that waited longer than its bound: it goes on without a gate (below).
--
-- lane_gate_enter(gates, preferred, wait_ms): the gate held until the transaction ends, or -1 when
-- every gate was taken and the preferred one was not free within wait_ms: a holder that long is
-- stalled (a cycle's transaction takes milliseconds), or the lanes queued on a gate are far too
-- many for the gates; the lane then goes on rather than stall behind it. lock_timeout is set for
-- that wait only (restored after; the inner block's rollback reverts it on the timeout).
CREATE OR REPLACE FUNCTION lane_gate_enter(gates integer, preferred integer, wait_ms integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    before text := current_setting('lock_timeout');
    g integer;
BEGIN
    IF gates < 1 OR preferred < 0 THEN
        RAISE EXCEPTION 'lane_gate_enter: gates must be at least 1 and preferred at least 0, got % and %',
            gates, preferred USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR i IN 0 .. gates - 1 LOOP
        g := (preferred + i) % gates;
        -- Fair with the queue: a gate with lanes queued for it is not free to a try.
        IF pg_try_advisory_xact_lock(727100021, g) THEN
            RETURN g;
        END IF;
    END LOOP;
    g := preferred % gates;
    BEGIN
        PERFORM set_config('lock_timeout', wait_ms || 'ms', true);
        PERFORM pg_advisory_xact_lock(727100021, g);
        PERFORM set_config('lock_timeout', before, true);
        RETURN g;
    EXCEPTION WHEN lock_not_available THEN
        RETURN -1;
    END;
END
$$;
