-- sweep_replies($1 account): leads messaged on the account with no reply known yet: in a live
-- enrollment (a reply the intake missed would otherwise let a follow-up go out), or in one that
-- finished after a message of the last 30 days, whatever the campaign's state but cancelled (a
-- reply after the last step belongs in the inbox, and the funnel counts it; an operator who
-- cancelled a campaign stopped its spending, and a trial saw its budget still read for sweeps). A lead the read before a follow-up
-- found replied (status replied, no reply stored: that read keeps no message) is one of these
-- too: its reply came while no delivery reached the intake, and only the inbox has it.
SELECT DISTINCT ON (l.lead_id) l.lead_id, l.profile_url, e.campaign_id
FROM enrollments e
JOIN leads l ON l.lead_id = e.lead_id
JOIN campaigns c ON c.campaign_id = e.campaign_id
WHERE e.account_id = $1 AND e.messaged_at IS NOT NULL AND e.replied_at IS NULL
  AND ((e.status::text NOT IN ('done', 'replied', 'failed', 'cancelled') AND c.state = 'active')
       OR (e.status::text IN ('done', 'replied', 'failed', 'cancelled') AND e.messaged_at > now() - interval '30 days'
           AND c.state <> 'cancelled'))
ORDER BY l.lead_id, e.campaign_id
LIMIT 5000;
