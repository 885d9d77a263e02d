-- swept_copies($1 account, $2 sender's canonical profile URL): the messages of that person on the
-- account that the catch-up sweep stored under its own id (newest first, at most 20): the time
-- the inbox gave for each (event.timestamp, which the sweep writes) and its text. serve compares a
-- message delivered late (the API's retry once serve is back, a stream or a poll catching up)
-- with them, so that the inbox does not show it twice; the times are parsed there, not cast here
-- (an event id of the API's own that happened to start with 'sweep:' must not fail a statement).
SELECT COALESCE(e.payload #>> '{event,timestamp}', ''), COALESCE(e.payload #>> '{event,message_text}', '')
FROM events e
JOIN leads l ON l.lead_id = e.lead_id
WHERE l.canonical_url = $2 AND e.account_id = $1 AND e.kind = 'message'
  AND e.source_id LIKE 'sweep:message:%'
ORDER BY e.event_id DESC
LIMIT 20;
