-- close_lost_attempts($1 JSON array of enrollment ids): a worker claimed these enrollments in
-- status `calling` after the previous lease expired; the previous call's intent is still
-- in_flight and its outcome will never be known, so it is closed as uncertain before the
-- reconciliation call is logged. Returns each closed attempt (its credit reservation is posted
-- in full: the call may have been charged).
UPDATE step_attempts
SET outcome = 'uncertain', error = 'outcome lost: the worker stopped before recording it', finished_at = now()
WHERE enrollment_id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb))
  AND outcome = 'in_flight'
RETURNING attempt_id, call, reconcile;
