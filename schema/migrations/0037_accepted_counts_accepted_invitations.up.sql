-- "accepted" counts the accepted invitations of the campaign: a lead counts as accepted when it
-- was invited and its person then connected. A lead's accepted_at is set when a connection is
-- seen at all (a check that finds ACCEPTED, an invite refused because the person is a connection
-- already), invited or not; the funnel and the reports counted those too, so `report funnel`
-- could show more accepted than invited (migration 0036 fixed only the rate). A connection seen
-- without an invitation of the campaign stays visible in report_enrollment_facts.connected_at
-- (every connection seen). It is not a count of the kept funnel: that would widen funnel_fact
-- and the counts' writes on the settle's path for what a view's scan answers.

-- The facts per enrollment: accepted_at only for the invited; connected_at for every connection
-- seen (a column added at the end, as CREATE OR REPLACE VIEW requires).
CREATE OR REPLACE VIEW report_enrollment_facts AS
SELECT e.enrollment_id, e.campaign_id, c.name AS campaign, e.account_id, e.lead_id, e.variant,
       e.status::text AS status, e.step, e.reason,
       e.invited_at,
       CASE WHEN e.invited_at IS NOT NULL THEN e.accepted_at END AS accepted_at,
       e.messaged_at,
       COALESCE(e.replied_at, CASE WHEN e.status = 'replied' THEN e.finished_at END) AS replied_at,
       e.accepted_at AS connected_at
FROM enrollments e JOIN campaigns c ON c.campaign_id = e.campaign_id;

-- The kept funnel counts (migration 0008): the same definition of accepted.
CREATE OR REPLACE FUNCTION funnel_fact_of(e enrollments, sign int) RETURNS funnel_fact
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT ROW(e.campaign_id, e.account_id, sign,
           sign * (e.checked_at IS NOT NULL)::int,
           sign * (e.invited_at IS NOT NULL)::int,
           sign * (e.accepted_at IS NOT NULL AND e.invited_at IS NOT NULL)::int,
           sign * (e.messaged_at IS NOT NULL
                   OR COALESCE(e.send_uncertain_at IS NOT NULL AND e.replied_at >= e.send_uncertain_at, false))::int,
           sign * (e.status = 'replied' OR e.replied_at IS NOT NULL)::int,
           sign * (e.status = 'failed')::int,
           sign * (e.status IN ('ready', 'calling', 'waiting'))::int,
           sign * e.credits)::funnel_fact
$$;

-- The counts kept so far, recounted under the new definition (this migration runs in one
-- transaction; the triggers count every later change).
LOCK TABLE enrollments IN SHARE MODE;
DELETE FROM funnel_counts;
INSERT INTO funnel_counts (campaign_id, account_id, shard, enrolled, checked, invited, accepted, messaged,
                           replied, failed, live, credits)
SELECT campaign_id, account_id, 0, enrolled, checked, invited, accepted, messaged, replied, failed, live, credits
FROM funnel_recount;
