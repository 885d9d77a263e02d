-- by_key($1 idempotency key): the manual reply made under that key, with its event and text.
SELECT reply_id, event_id, body FROM manual_replies WHERE idempotency_key = $1;
