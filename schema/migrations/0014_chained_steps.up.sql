-- A settled call whose next step is due at once has that step decided in the same cycle
-- (engine/worker.cpp, settle): engine/settle then writes the row's new state with its lease (and
-- the inbox cursor its events were applied up to) together with the outcome, one row version
-- instead of a release followed by a claim. Its batch rows carry two more fields: NULL leaves the
-- cursor as it is, and a row not leased (`leased` false or NULL) is released as before.
-- A new type rather than an altered one (migration 0013's rule): workers of the previous version,
-- still running while this migration is applied, keep sending worker_settle_row's 14 fields.
DO $$ BEGIN
    CREATE TYPE worker_settle_row_v2 AS (
        enrollment_id bigint, step text, status text, next_run_at_ms bigint, attempt integer, reconcile boolean,
        accepted_seen boolean, reason text, variant text, attempt_id bigint, outcome text, error text,
        credits integer, call text, event_cursor bigint, leased boolean);
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
