-- close_lost_attempts($1 JSON array of enrollment ids): a worker claimed these enrollments in
-- status `calling` after the previous lease expired; the previous call's intent is still
-- in_flight and its outcome will never be known, so it is closed as uncertain before the
-- reconciliation call is logged. Returns each closed attempt (its credit reservation is posted
-- in full: the call may have been charged).
-- A lost send is also the enrollment's send_uncertain_at milestone (migration 0005).
-- The attempts are found per enrollment through step_attempts_enrollment (OFFSET 0 keeps the
-- lookup per id), then updated by primary key: with statistics taken while the table was small,
-- `enrollment_id = ANY(...)` alone was planned as a scan of the whole intent log.
WITH lost AS MATERIALIZED (
    SELECT s.attempt_id
    FROM unnest(translate($1, '[]', '{}')::bigint[]) AS id(enrollment_id)  -- see engine/pending_events
    CROSS JOIN LATERAL (
        SELECT a.attempt_id FROM step_attempts a
        WHERE a.enrollment_id = id.enrollment_id AND a.outcome = 'in_flight'
        OFFSET 0
    ) s
), closed AS (
    UPDATE step_attempts
    SET outcome = 'uncertain', error = 'outcome lost: the worker stopped before recording it', finished_at = now()
    WHERE attempt_id = ANY(ARRAY(SELECT attempt_id FROM lost)) AND outcome = 'in_flight'
    RETURNING attempt_id, call, reconcile, enrollment_id, started_at
), marked AS (
    UPDATE enrollments e SET send_uncertain_at = COALESCE(e.send_uncertain_at, c.started_at)
    FROM closed c
    WHERE e.enrollment_id = c.enrollment_id AND c.call = 'send' AND NOT c.reconcile
)
SELECT attempt_id, call, reconcile FROM closed;
