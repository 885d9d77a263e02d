-- Wait codes: why a live lead waits (and why a campaign is paused), as a code the statements
-- match, next to the English reason people read. Until now engine/wake_budget_waits and
-- accounts/wake_quota_waiters found the leads waiting for a raised budget or quota by matching
-- enrollments.reason with LIKE against the sentences the worker happened to write, and the
-- resumes matched campaigns.pause_reason the same way: a reworded sentence silently stopped them.
--
-- 1. enrollments.wait_code: campaigns::wait_code (campaigns/machine.hpp) as text, NULL for none.
--    It travels with `reason`: a statement that writes a reason writes its code (NULL when the
--    reason is not a wait: an error, a failure, a cancellation), one that keeps the reason keeps
--    the code. The CHECK is the one list of codes on the database side (keep it equal to
--    campaigns::all_wait_codes; engine_rows_pg_test checks both ways).
ALTER TABLE enrollments ADD COLUMN IF NOT EXISTS wait_code text;
ALTER TABLE enrollments DROP CONSTRAINT IF EXISTS enrollments_wait_code_known;
ALTER TABLE enrollments ADD CONSTRAINT enrollments_wait_code_known CHECK (wait_code IN (
    'schedule', 'key_rate', 'key_cooldown', 'account_cooldown', 'day_quota', 'week_quota', 'campaign_quota',
    'pacing', 'limits_unavailable', 'limits_error', 'throttled', 'campaign_budget', 'day_budget',
    'account_budget', 'no_budget'));

-- 2. Existing databases: the live rows' codes from the sentences the worker wrote before this
--    migration (engine/limits_gate.cpp decision_of, engine/worker.cpp finish_ledger and run_calls,
--    campaigns/machine.cpp). This is the last place those sentences are matched; a reason none of
--    these patterns knows (an API error of a transient failure) has no code, as it should.
--    Finished rows wait for nothing and are left alone.
UPDATE enrollments SET wait_code = CASE
        WHEN reason = 'outside working hours' THEN 'schedule'
        WHEN reason = 'waiting for the API key''s request rate' THEN 'key_rate'
        WHEN reason = 'waiting for the API key''s RATE_LIMITED cooldown' THEN 'key_cooldown'
        WHEN reason LIKE 'waiting for the % RATE\_LIMITED cooldown of account %' THEN 'account_cooldown'
        WHEN reason LIKE 'waiting for the % day quota of account %' THEN 'day_quota'
        WHEN reason LIKE 'waiting for the % week quota of account %' THEN 'week_quota'
        WHEN reason LIKE 'waiting for the campaign''s % cap on account %' THEN 'campaign_quota'
        WHEN reason LIKE 'waiting for the % pacing of account %' THEN 'pacing'
        WHEN reason = 'waiting for the rate-limit store (Redis) to come back' THEN 'limits_unavailable'
        WHEN reason LIKE 'waiting for the rate limits (%)' THEN 'limits_error'
        WHEN reason = 'not sent: a cooldown or an unavailable account holds it' THEN 'throttled'
        WHEN reason LIKE '%RATE\_LIMITED%' THEN 'throttled'
        WHEN reason = 'paused: budget exhausted' THEN 'campaign_budget'
        WHEN reason LIKE 'waiting for the campaign''s daily budget%' THEN 'day_budget'
        WHEN reason LIKE 'the campaign''s budget for account % is spent' THEN 'account_budget'
        WHEN reason LIKE 'the campaign has no budget in the ledger%' THEN 'no_budget'
    END
WHERE status IN ('ready', 'calling', 'waiting') AND reason <> '' AND wait_code IS NULL;

-- 3. campaigns.pause_code: why a paused campaign is paused, for the statements that resume it
--    (ledger/resume_campaign, credits/resume, campaigns/resume_ended matched pause_reason with
--    LIKE 'budget exhausted:%', 'credits:%' and 'ended:%'). Each pausing statement writes its own
--    code; pause_reason stays the sentence people read. NULL when not paused.
--      operator  an operator's pause (campaigns/set_state); only an operator resumes it
--      budget    the ledger: the campaign's budget cannot cover the next call (ledger/pause_campaign)
--      credits   the API key is out of credits (credits/pause_all)
--      ended     the campaign's end_at passed (engine/claim_due)
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS pause_code text;
ALTER TABLE campaigns DROP CONSTRAINT IF EXISTS campaigns_pause_code_known;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_pause_code_known
    CHECK (pause_code IN ('operator', 'budget', 'credits', 'ended'));
UPDATE campaigns SET pause_code = CASE
        WHEN pause_reason LIKE 'budget exhausted:%' THEN 'budget'
        WHEN pause_reason LIKE 'credits:%' THEN 'credits'
        WHEN pause_reason LIKE 'ended:%' THEN 'ended'
        ELSE 'operator'
    END
WHERE state = 'paused' AND pause_code IS NULL;

-- 4. Classes of attempt outcomes, the SQL twins of engine::took_effect (engine/codes.hpp): the
--    statements that ask whether a call took effect, or may have, call these instead of each
--    listing outcome names. Inlined by the planner (one SQL expression, immutable).
CREATE OR REPLACE FUNCTION attempt_took_effect(o attempt_outcome) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT o IN ('ok', 'reconciled_present')
$$;
-- ... or may have: in flight, or its answer was lost (uncertain), as well.
CREATE OR REPLACE FUNCTION attempt_may_have_taken_effect(o attempt_outcome) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT o IN ('in_flight', 'ok', 'uncertain', 'reconciled_present')
$$;

-- 5. The worker's batch rows carry the code after the state's variant (engine/batch_rows.hpp).
--    New types rather than altered ones (migration 0013's rule): workers of the previous version,
--    still running while this is applied, keep sending worker_transition_row and
--    worker_settle_row_v2 to their own statements, which leave wait_code as it was (such a row's
--    code may then be stale until a new worker writes it, and a campaign such a worker pauses
--    has no pause code, so no automatic resume lifts it: stop the workers to apply this
--    migration).
DO $$ BEGIN
    CREATE TYPE worker_transition_row_v2 AS (
        enrollment_id bigint, step text, status text, next_run_at_ms bigint, attempt integer, reconcile boolean,
        accepted_seen boolean, reason text, variant text, wait_code text, event_cursor bigint, leased boolean);
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
    CREATE TYPE worker_settle_row_v3 AS (
        enrollment_id bigint, step text, status text, next_run_at_ms bigint, attempt integer, reconcile boolean,
        accepted_seen boolean, reason text, variant text, wait_code text, attempt_id bigint, outcome text,
        error text, credits integer, call text, event_cursor bigint, leased boolean);
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
