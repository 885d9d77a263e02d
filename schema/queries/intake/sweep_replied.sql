-- sweep_replied($1 account): the leads on the account whose reply is known, messaged in the last
-- 30 days, each with its newest stored messages (up to 5 rows a lead, newest first: the payload
-- as received and when it was stored, in epoch milliseconds). A gap sweep compares the inbox's
-- last message of each with the newest of these, so that a later message lost while no serve ran
-- reaches the inbox too. The index of events (lead, account).
SELECT r.lead_id, r.profile_url, r.campaign_id, m.payload::text,
       (extract(epoch FROM m.received_at) * 1000)::bigint
FROM (
    SELECT DISTINCT ON (l.lead_id) l.lead_id, l.profile_url, e.campaign_id
    FROM enrollments e
    JOIN leads l ON l.lead_id = e.lead_id
    JOIN campaigns c ON c.campaign_id = e.campaign_id
    WHERE e.account_id = $1 AND e.replied_at IS NOT NULL AND e.messaged_at > now() - interval '30 days'
      AND c.state <> 'cancelled'  -- a cancelled campaign's spending stopped (sweep_replies)
    ORDER BY l.lead_id, e.campaign_id
    LIMIT 5000
) r
CROSS JOIN LATERAL (
    SELECT ev.payload, ev.received_at FROM events ev
    WHERE ev.lead_id = r.lead_id AND ev.account_id = $1 AND ev.kind = 'message'
    ORDER BY ev.event_id DESC
    LIMIT 5
) m
ORDER BY r.lead_id;
