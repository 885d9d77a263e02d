-- insert_intents($1 intents, worker_intent_row[]; $2 the lane's lease owner): the intent log.
-- Committed in the same transaction as the enrollment's move to `calling` and the call's credit
-- reservation, before the API call leaves. Attempt ids come from engine/next_attempt_ids.
-- An intent is written only for an enrollment that exists (looked up by primary key, row by row,
-- without the lock a foreign key's check takes: the rows are locked by this transaction's claim or
-- chain hold already); the caller counts the rows written and refuses the batch when one is
-- missing. This replaced a foreign key (migration 0029).
INSERT INTO step_attempts (attempt_id, enrollment_id, step, call, reconcile, attempt, variant, body, worker)
SELECT x.attempt_id, x.enrollment_id, x.step, x.call, x.reconcile, x.attempt, x.variant, x.body, $2
FROM rows_of($1::worker_intent_row[]) AS x
-- OFFSET 0 keeps the lookup a probe per row: as a semi-join, statistics of a table analyzed while
-- empty made it a scan of every enrollment (tests/integration/engine_plans_pg_test).
CROSS JOIN LATERAL (SELECT true FROM enrollments e WHERE e.enrollment_id = x.enrollment_id OFFSET 0) k;
