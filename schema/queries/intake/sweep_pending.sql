-- sweep_pending($1 account): the leads of live enrollments on the account whose invitation went
-- out and whose acceptance is not known yet (waiting on an acceptance, or past it without the
-- milestone), with the campaign each belongs to (its budget pays for the sweep's reads).
SELECT DISTINCT ON (l.lead_id) l.lead_id, l.profile_url, e.campaign_id
FROM enrollments e
JOIN leads l ON l.lead_id = e.lead_id
JOIN campaigns c ON c.campaign_id = e.campaign_id
WHERE e.account_id = $1 AND e.invited_at IS NOT NULL AND e.accepted_at IS NULL
  AND e.status::text NOT IN ('done', 'replied', 'failed', 'cancelled') AND c.state = 'active'
ORDER BY l.lead_id, e.campaign_id
LIMIT 5000;
