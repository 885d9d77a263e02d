-- Milestones on each enrollment, written by the same statements that record the facts (the
-- settle of a call, the inbox insert of an event), so the funnel report is one scan of the
-- campaign's enrollments instead of joins over the intent log and the inbox (1,000,000
-- enrollments: ~0.2 s instead of ~5 s). The facts stay where they were; these are their dates.
ALTER TABLE enrollments
    ADD COLUMN IF NOT EXISTS checked_at        timestamptz,  -- first check_invitation that answered
    ADD COLUMN IF NOT EXISTS invited_at        timestamptz,  -- invitation sent (ok, or reconciled present)
    ADD COLUMN IF NOT EXISTS messaged_at       timestamptz,  -- message sent (ok, or reconciled present)
    ADD COLUMN IF NOT EXISTS send_uncertain_at timestamptz,  -- a send that may have gone out (started at)
    ADD COLUMN IF NOT EXISTS accepted_at       timestamptz,  -- first accepted_invitation event
    ADD COLUMN IF NOT EXISTS replied_at        timestamptz,  -- first message_received event
    ADD COLUMN IF NOT EXISTS credits           bigint NOT NULL DEFAULT 0;  -- credits of its calls

-- Existing rows: from the intent log and the inbox.
UPDATE enrollments e
SET checked_at = a.checked_at, invited_at = a.invited_at, messaged_at = a.messaged_at,
    send_uncertain_at = a.send_uncertain_at, credits = a.credits
FROM (SELECT enrollment_id,
             min(finished_at) FILTER (WHERE call = 'check_invitation' AND outcome IN ('ok', 'reconciled_present')) AS checked_at,
             min(finished_at) FILTER (WHERE call = 'invite' AND outcome IN ('ok', 'reconciled_present')) AS invited_at,
             min(finished_at) FILTER (WHERE call = 'send' AND outcome IN ('ok', 'reconciled_present')) AS messaged_at,
             min(started_at) FILTER (WHERE call = 'send' AND outcome = 'uncertain') AS send_uncertain_at,
             COALESCE(sum(credits), 0) AS credits
      FROM step_attempts GROUP BY enrollment_id) a
WHERE e.enrollment_id = a.enrollment_id;

UPDATE enrollments e
SET accepted_at = v.accepted_at, replied_at = v.replied_at
FROM (SELECT lead_id, account_id,
             min(received_at) FILTER (WHERE kind = 'accepted_invitation') AS accepted_at,
             min(received_at) FILTER (WHERE kind = 'message') AS replied_at
      FROM events WHERE lead_id IS NOT NULL GROUP BY lead_id, account_id) v
WHERE e.lead_id = v.lead_id AND e.account_id = v.account_id;
