-- close_lost_attempts($1 JSON array of enrollment ids): a worker claimed these enrollments in
-- status `calling` after the previous lease expired; the previous call's intent is still
-- in_flight and its outcome will never be known, so it is closed as uncertain before the
-- reconciliation call is logged. Returns each closed attempt (its credit reservation is posted
-- in full: the call may have been charged).
-- A lost send is also the enrollment's send_uncertain_at milestone (migration 0005).
WITH closed AS (
    UPDATE step_attempts
    SET outcome = 'uncertain', error = 'outcome lost: the worker stopped before recording it', finished_at = now()
    WHERE enrollment_id = ANY(translate($1, '[]', '{}')::bigint[])  -- see engine/pending_events
      AND outcome = 'in_flight'
    RETURNING attempt_id, call, reconcile, enrollment_id, started_at
), marked AS (
    UPDATE enrollments e SET send_uncertain_at = COALESCE(e.send_uncertain_at, c.started_at)
    FROM closed c
    WHERE e.enrollment_id = c.enrollment_id AND c.call = 'send' AND NOT c.reconcile
)
SELECT attempt_id, call, reconcile FROM closed;
