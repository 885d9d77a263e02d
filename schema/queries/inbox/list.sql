-- list($1 campaign name or '', $2 account id or '', $3 cursor: an event id (0: from the newest),
-- $4 limit): the replies (message events), newest first, with the campaign of the lead's
-- enrollment on the receiving account, if any, and the manual replies made to each. A message
-- stored unread with no lead that the catch-up sweep stored again under its lead (copy_of,
-- migration 0044) is listed once, as the sweep's.
SELECT e.event_id, e.account_id, to_char(e.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), e.payload::text, e.inbox_mark,
       COALESCE(l.lead_id, 0), COALESCE(l.profile_url, ''), COALESCE(c.name, ''),
       (SELECT count(*) FROM manual_replies r WHERE r.event_id = e.event_id),
       COALESCE((SELECT r.state FROM manual_replies r WHERE r.event_id = e.event_id
                 ORDER BY r.reply_id DESC LIMIT 1), '')
FROM events e
LEFT JOIN leads l ON l.lead_id = e.lead_id
LEFT JOIN LATERAL (
    SELECT x.campaign_id FROM enrollments x
    WHERE x.lead_id = e.lead_id AND x.account_id = e.account_id
    ORDER BY x.enrollment_id DESC LIMIT 1
) en ON true
LEFT JOIN campaigns c ON c.campaign_id = en.campaign_id
WHERE e.kind = 'message' AND e.copy_of IS NULL
  AND ($3::bigint = 0 OR e.event_id < $3::bigint)
  AND ($1::text = '' OR c.name = $1::text)
  AND ($2::text = '' OR e.account_id = $2::text)
ORDER BY e.event_id DESC
LIMIT $4::bigint;
