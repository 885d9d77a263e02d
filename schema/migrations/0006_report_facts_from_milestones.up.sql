-- report_enrollment_facts (0004) recomputed each enrollment's dates from the intent log and the
-- inbox with a subquery per date; since 0005 the enrollment carries those dates itself, written
-- by the same statements that record the facts. Same columns, one scan.
CREATE OR REPLACE VIEW report_enrollment_facts AS
SELECT e.enrollment_id, e.campaign_id, c.name AS campaign, e.account_id, e.lead_id, e.variant,
       e.status::text AS status, e.step, e.reason,
       e.invited_at,
       e.accepted_at,
       e.messaged_at,
       COALESCE(e.replied_at, CASE WHEN e.status = 'replied' THEN e.finished_at END) AS replied_at
FROM enrollments e JOIN campaigns c ON c.campaign_id = e.campaign_id;
