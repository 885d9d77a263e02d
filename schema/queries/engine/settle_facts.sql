-- settle_facts($1 outcomes, worker_settle_row_v3[] as engine/settle got them; $2 JSON array of
-- enrollment ids): the rows engine/settle recorded the outcome of but did not move, their
-- enrollment no longer `calling` under the lane's lease (cancelled with its campaign while the
-- call was out). What the call did still counts for the lead: the funnel's milestones and its
-- credits, as engine/settle writes them; its state stays as the cancel left it. Run only when
-- such a row is there (never in the common case).
UPDATE enrollments e
SET accepted_at = CASE WHEN x.accepted_seen THEN COALESCE(e.accepted_at, now()) ELSE e.accepted_at END,
    checked_at = CASE WHEN x.call = 'check_invitation' AND attempt_took_effect(x.outcome::attempt_outcome)
                      THEN COALESCE(e.checked_at, now()) ELSE e.checked_at END,
    invited_at = CASE WHEN x.call = 'invite' AND attempt_took_effect(x.outcome::attempt_outcome)
                      THEN COALESCE(e.invited_at, now()) ELSE e.invited_at END,
    messaged_at = CASE WHEN x.call = 'send' AND attempt_took_effect(x.outcome::attempt_outcome)
                       THEN COALESCE(e.messaged_at, now()) ELSE e.messaged_at END,
    send_uncertain_at = CASE WHEN x.call = 'send' AND x.outcome = 'uncertain' AND e.send_uncertain_at IS NULL
                             THEN (SELECT started_at FROM step_attempts WHERE attempt_id = x.attempt_id)
                             ELSE e.send_uncertain_at END,
    credits = e.credits + x.credits,
    updated_at = now()
FROM rows_of($1::worker_settle_row_v3[]) x
WHERE e.enrollment_id = x.enrollment_id
  AND e.enrollment_id IN (SELECT jsonb_array_elements_text($2::jsonb)::bigint)
