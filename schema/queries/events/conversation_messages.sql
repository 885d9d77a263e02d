-- conversation_messages($1 account, $2 conversation id): the message events of one conversation
-- on the account that are not already a copy of another: the unread ones (no lead) and the
-- catch-up sweep's copies (a lead), oldest first, with their payloads.
SELECT event_id, COALESCE(lead_id, 0), source_id LIKE 'sweep:%', payload::text
FROM events
WHERE account_id = $1 AND conversation_id = $2 AND kind = 'message' AND copy_of IS NULL
ORDER BY event_id;
