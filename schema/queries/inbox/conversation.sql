-- conversation($1 lead, $2 account): what the engine knows of the conversation with a lead on an
-- account, oldest first: their messages (message events) and ours (sends that went out: step
-- calls and manual replies, including those confirmed by reading the conversation).
SELECT 'in' AS direction, e.payload::text AS text_or_payload, to_char(e.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at_text, e.received_at AS at, '' AS source, e.event_id
FROM events e
WHERE e.lead_id = $1 AND e.account_id = $2 AND e.kind = 'message'
UNION ALL
SELECT 'out', a.body, to_char(COALESCE(a.finished_at, a.started_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), COALESCE(a.finished_at, a.started_at), a.step, 0
FROM enrollments en
JOIN step_attempts a ON a.enrollment_id = en.enrollment_id
WHERE en.lead_id = $1 AND en.account_id = $2 AND a.call = 'send'
  AND ((NOT a.reconcile AND a.outcome = 'ok') OR (a.reconcile AND a.outcome = 'reconciled_present'))
ORDER BY at, event_id;
