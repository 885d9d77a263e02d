-- quarantine_list($1 limit): the newest quarantined events, the raw body in base64 (it may not be
-- UTF-8), and the body itself (store::quarantined_events shows it as text when it is UTF-8).
SELECT quarantine_id, source_id, account_id, channel, reason,
       to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       length(body),
       translate(encode(body, 'base64'), E'\n', ''),
       body
FROM events_quarantine
ORDER BY quarantine_id DESC
LIMIT $1;
