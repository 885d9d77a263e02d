-- funnel($1 campaign name): leads found (enrolled or skipped), then how many reached each stage.
-- Stages count enrollments, from the intent log (step_attempts) and the inbox (events), so the
-- numbers are what the API was asked and told, not what the state machine assumed. One pass
-- over each table (grouped by enrollment, hash-joined), not a lookup per enrollment.
WITH c AS (SELECT campaign_id FROM campaigns WHERE name = $1),
en AS (SELECT e.enrollment_id, e.lead_id, e.account_id, e.status FROM enrollments e JOIN c USING (campaign_id)),
att AS (
    SELECT a.enrollment_id,
           bool_or(a.call = 'check_invitation' AND a.outcome IN ('ok', 'reconciled_present')) AS checked,
           bool_or(a.call = 'invite' AND a.outcome IN ('ok', 'reconciled_present')) AS invited,
           bool_or(a.call = 'send' AND a.outcome IN ('ok', 'reconciled_present')) AS sent,
           min(a.started_at) FILTER (WHERE a.call = 'send' AND a.outcome = 'uncertain') AS send_uncertain_at,
           sum(a.credits) AS credits
    FROM step_attempts a JOIN en ON en.enrollment_id = a.enrollment_id
    GROUP BY a.enrollment_id
),
ev AS (
    SELECT en.enrollment_id,
           bool_or(v.kind = 'accepted_invitation') AS accepted,
           max(v.received_at) FILTER (WHERE v.kind = 'message') AS last_reply_at
    FROM events v JOIN en ON v.lead_id = en.lead_id AND v.account_id = en.account_id
    GROUP BY en.enrollment_id
),
skipped AS (SELECT count(*) AS n FROM skipped_leads s JOIN c USING (campaign_id))
SELECT
    count(*) + (SELECT n FROM skipped) AS found,
    (SELECT n FROM skipped) AS skipped,
    count(*) FILTER (WHERE att.checked) AS checked,
    count(*) FILTER (WHERE att.invited) AS invited,
    count(*) FILTER (WHERE ev.accepted) AS accepted,
    -- a send whose outcome was lost (worker killed) is known to have happened when the lead
    -- answered it: the reply ends the sequence before any reconciliation is needed
    count(*) FILTER (WHERE att.sent OR (att.send_uncertain_at IS NOT NULL
                                         AND ev.last_reply_at >= att.send_uncertain_at)) AS messaged,
    -- a reply counts whether it ended a live sequence (status replied) or came after the last step
    count(*) FILTER (WHERE en.status = 'replied' OR ev.last_reply_at IS NOT NULL) AS replied,
    count(*) FILTER (WHERE en.status = 'failed') AS failed,
    count(*) FILTER (WHERE en.status IN ('ready', 'calling', 'waiting')) AS live,
    COALESCE(sum(att.credits), 0) AS credits
FROM en
LEFT JOIN att ON att.enrollment_id = en.enrollment_id
LEFT JOIN ev ON ev.enrollment_id = en.enrollment_id;
