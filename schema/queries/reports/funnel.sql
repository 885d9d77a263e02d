-- funnel($1 campaign name): leads found (enrolled or skipped), then how many reached each stage.
-- Stages count enrollments, from the intent log (step_attempts) and the inbox (events), so the
-- numbers are what the API was asked and told, not what the state machine assumed.
WITH c AS (SELECT campaign_id FROM campaigns WHERE name = $1),
en AS (SELECT e.* FROM enrollments e JOIN c USING (campaign_id)),
ok AS (
    SELECT a.enrollment_id, a.call
    FROM step_attempts a JOIN en ON en.enrollment_id = a.enrollment_id
    WHERE a.outcome IN ('ok', 'reconciled_present')
)
SELECT
    (SELECT count(*) FROM en) + (SELECT count(*) FROM skipped_leads s JOIN c USING (campaign_id)) AS found,
    (SELECT count(*) FROM skipped_leads s JOIN c USING (campaign_id)) AS skipped,
    (SELECT count(DISTINCT enrollment_id) FROM ok WHERE call = 'check_invitation') AS checked,
    (SELECT count(DISTINCT enrollment_id) FROM ok WHERE call = 'invite') AS invited,
    (SELECT count(DISTINCT en.enrollment_id) FROM en JOIN events ev
        ON ev.lead_id = en.lead_id AND ev.account_id = en.account_id AND ev.kind = 'accepted_invitation') AS accepted,
    -- a send whose outcome was lost (worker killed) is known to have happened when the lead
    -- answered it: the reply ends the sequence before any reconciliation is needed
    (SELECT count(DISTINCT en.enrollment_id) FROM en JOIN step_attempts a
        ON a.enrollment_id = en.enrollment_id AND a.call = 'send'
     WHERE a.outcome IN ('ok', 'reconciled_present')
        OR (a.outcome = 'uncertain' AND EXISTS (
            SELECT 1 FROM events ev WHERE ev.lead_id = en.lead_id AND ev.account_id = en.account_id
              AND ev.kind = 'message' AND ev.received_at >= a.started_at))) AS messaged,
    -- a reply counts whether it ended a live sequence (status replied) or came after the last step
    (SELECT count(DISTINCT en.enrollment_id) FROM en LEFT JOIN events ev
        ON ev.lead_id = en.lead_id AND ev.account_id = en.account_id AND ev.kind = 'message'
     WHERE en.status = 'replied' OR ev.event_id IS NOT NULL) AS replied,
    (SELECT count(*) FROM en WHERE status = 'failed') AS failed,
    (SELECT count(*) FROM en WHERE status IN ('ready', 'calling', 'waiting')) AS live,
    (SELECT COALESCE(sum(a.credits), 0) FROM step_attempts a JOIN en ON en.enrollment_id = a.enrollment_id) AS credits;
