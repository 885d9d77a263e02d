-- lead_events($1 lead id, $2 account id): inbox events of the lead on its sender account, oldest
-- first, at most 200 (index events_lead).
SELECT event_id, kind, to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM events WHERE lead_id = $1 AND account_id = $2
ORDER BY event_id
LIMIT 200;
