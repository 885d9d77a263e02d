-- events($1 kind or '' for all, $2 limit): the most recent inbox events, newest first.
SELECT ev.event_id, ev.source_id, ev.account_id, ev.kind, COALESCE(l.profile_url, ''),
       to_char(ev.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), ev.payload::text
FROM events ev LEFT JOIN leads l USING (lead_id)
WHERE $1 = '' OR ev.kind = $1
ORDER BY ev.event_id DESC
LIMIT $2;
