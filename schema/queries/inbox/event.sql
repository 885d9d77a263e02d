-- event($1 event id): one reply with what answering it needs: its lead, the lead's enrollment on
-- the receiving account (the newest), that campaign's state and the account's availability, and
-- the event it is a copy of (0: none; migration 0044).
SELECT e.event_id, e.account_id, to_char(e.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), e.payload::text, e.inbox_mark,
       COALESCE(l.lead_id, 0), COALESCE(l.profile_url, ''), COALESCE(c.name, ''),
       COALESCE(en.enrollment_id, 0), COALESCE(c.campaign_id, 0), COALESCE(c.state::text, ''),
       COALESCE(a.connected, false), COALESCE(a.api_status, ''), COALESCE(l.canonical_url, ''),
       COALESCE(l.fields->>'company', ''), e.kind, COALESCE(e.marked_by, ''), to_char(e.marked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       COALESCE(e.copy_of, 0)
FROM events e
LEFT JOIN leads l ON l.lead_id = e.lead_id
LEFT JOIN LATERAL (
    SELECT x.enrollment_id, x.campaign_id FROM enrollments x
    WHERE x.lead_id = e.lead_id AND x.account_id = e.account_id
    ORDER BY x.enrollment_id DESC LIMIT 1
) en ON true
LEFT JOIN campaigns c ON c.campaign_id = en.campaign_id
LEFT JOIN accounts a ON a.account_id = e.account_id
WHERE e.event_id = $1;
