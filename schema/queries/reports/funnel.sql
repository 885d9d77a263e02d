-- funnel($1 campaign name): leads found (enrolled or skipped), then how many reached each stage.
-- One scan of the campaign's enrollments over their milestones (migration 0005), which the
-- settle of each call (intent log) and the insert of each inbox event write: the numbers are
-- what the API was asked and told, not what the state machine assumed.
WITH c AS (SELECT campaign_id FROM campaigns WHERE name = $1),
skipped AS (SELECT count(*) AS n FROM skipped_leads s JOIN c USING (campaign_id))
SELECT
    count(*) + (SELECT n FROM skipped) AS found,
    (SELECT n FROM skipped) AS skipped,
    count(*) FILTER (WHERE e.checked_at IS NOT NULL) AS checked,
    count(*) FILTER (WHERE e.invited_at IS NOT NULL) AS invited,
    count(*) FILTER (WHERE e.accepted_at IS NOT NULL) AS accepted,
    -- a send whose outcome was lost (worker killed) is known to have happened when the lead
    -- answered it: the reply ends the sequence before any reconciliation is needed
    count(*) FILTER (WHERE e.messaged_at IS NOT NULL
                        OR (e.send_uncertain_at IS NOT NULL AND e.replied_at >= e.send_uncertain_at)) AS messaged,
    -- a reply counts whether it ended a live sequence (status replied) or came after the last step
    count(*) FILTER (WHERE e.status = 'replied' OR e.replied_at IS NOT NULL) AS replied,
    count(*) FILTER (WHERE e.status = 'failed') AS failed,
    count(*) FILTER (WHERE e.status IN ('ready', 'calling', 'waiting')) AS live,
    COALESCE(sum(e.credits), 0) AS credits
FROM enrollments e
WHERE e.campaign_id = (SELECT campaign_id FROM c);
