-- The row types of the worker's and the ledger's batch parameters. Each batch statement takes
-- one array of these (`rows_of($1::worker_settle_row[])`, below) instead of a JSON array read with
-- json_to_recordset: the JSON was validated, parsed again and hashed object by object, about a
-- sixth of Postgres's CPU on the worker's hot path; an array of rows is read field by field with
-- each type's input function. The writer is engine/record_rows.hpp; the C++ field lists
-- (engine/batch_rows.hpp) are held equal to these types by engine_rows_pg_test.
-- A type is only ever replaced by a later migration that also replaces its statements.
DO $$ BEGIN
    CREATE TYPE worker_transition_row AS (
        enrollment_id bigint, step text, status text, next_run_at_ms bigint, attempt integer, reconcile boolean,
        accepted_seen boolean, reason text, variant text, event_cursor bigint, leased boolean);
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
    CREATE TYPE worker_settle_row AS (
        enrollment_id bigint, step text, status text, next_run_at_ms bigint, attempt integer, reconcile boolean,
        accepted_seen boolean, reason text, variant text, attempt_id bigint, outcome text, error text,
        credits integer, call text);
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
    CREATE TYPE worker_intent_row AS (
        attempt_id bigint, enrollment_id bigint, step text, call text, reconcile boolean, attempt integer,
        variant text, body text);
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
    CREATE TYPE ledger_transfer_row AS (
        transfer_id bigint, attempt_id bigint, campaign_id bigint, sender text, action text, day date,
        reserved bigint, scopes bigint[], state text, posted bigint, overrun bigint, shortfall bigint);
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
    CREATE TYPE ledger_settled_row AS (transfer_id bigint, state text, posted bigint, overrun bigint, shortfall bigint);
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
    CREATE TYPE ledger_entry_row AS (
        transfer_id bigint, attempt_id bigint, scope_id bigint, kind ledger_entry_kind, debit ledger_account_kind,
        credit ledger_account_kind, amount bigint);
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
    CREATE TYPE ledger_pair_row AS (campaign_id bigint, sender text);
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

-- The statements read a batch with rows_of($1::<row type>[]), not unnest: a prepared statement's
-- generic plan sees the array as a parameter, and unnest's estimate for it is 10 rows. With 10,
-- the planner matched 200 enrollments to their rows by rescanning the batch once per enrollment
-- (40,000 row comparisons per statement, 20 times slower than the JSON it replaced). rows_of is
-- PL/pgSQL so that it is not inlined, and its ROWS estimate is a batch's usual size.
CREATE OR REPLACE FUNCTION rows_of(batch anyarray) RETURNS SETOF anyelement
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE ROWS 200 AS $$
BEGIN
    RETURN QUERY SELECT * FROM unnest(batch);
END $$;
