-- A send whose answer was lost (send_uncertain_at) and that the person then answered went out:
-- the kept funnel counts it messaged (funnel_fact_of, migration 0008), and the reports read from
-- report_enrollment_facts did not, so `report funnel` and `report accounts` disagreed on messaged
-- and replied (a trial: 22 against 21, and a variant's 13 replies against its account's 14). The
-- facts now give such a send's time as messaged_at, as the funnel counts it.
CREATE OR REPLACE VIEW report_enrollment_facts AS
SELECT e.enrollment_id, e.campaign_id, c.name AS campaign, e.account_id, e.lead_id, e.variant,
       e.status::text AS status, e.step, e.reason,
       e.invited_at,
       CASE WHEN e.invited_at IS NOT NULL THEN e.accepted_at END AS accepted_at,
       COALESCE(e.messaged_at,
                CASE WHEN e.send_uncertain_at IS NOT NULL AND e.replied_at >= e.send_uncertain_at
                     THEN e.send_uncertain_at END) AS messaged_at,
       COALESCE(e.replied_at, CASE WHEN e.status = 'replied' THEN e.finished_at END) AS replied_at,
       e.accepted_at AS connected_at
FROM enrollments e JOIN campaigns c ON c.campaign_id = e.campaign_id;
