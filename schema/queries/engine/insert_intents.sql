-- insert_intents($1 intents, worker_intent_row[]; $2 the lane's lease owner): the intent log.
-- Committed in the same transaction as the enrollment's move to `calling` and the call's credit
-- reservation, before the API call leaves. Attempt ids come from engine/next_attempt_ids.
INSERT INTO step_attempts (attempt_id, enrollment_id, step, call, reconcile, attempt, variant, body, worker)
SELECT x.attempt_id, x.enrollment_id, x.step, x.call, x.reconcile, x.attempt, x.variant, x.body, $2
FROM rows_of($1::worker_intent_row[]) AS x;
