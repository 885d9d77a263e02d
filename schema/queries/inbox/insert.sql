-- insert($1 key, $2 event, $3 enrollment, $4 campaign, $5 account, $6 lead, $7 text, $8 by): the
-- intent of a manual reply; nothing when a reply with the same key exists (by_key then names it).
INSERT INTO manual_replies (idempotency_key, event_id, enrollment_id, campaign_id, account_id, lead_id, body, requested_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING reply_id;
