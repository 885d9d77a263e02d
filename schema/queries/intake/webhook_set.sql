-- webhook_set($1 account, $2 webhook id, $3 mode, $4 url, $5 encrypted secret or NULL): the
-- account's webhook as serve created or adopted it. A new webhook starts a gap: events before it
-- reached no receiver, so the catch-up sweep covers the account again.
UPDATE accounts
SET webhook_id = NULLIF($2, ''), webhook_mode = NULLIF($3, ''), webhook_url = NULLIF($4, ''),
    webhook_secret = $5, intake_gap_at = COALESCE(intake_gap_at, now()), updated_at = now()
WHERE account_id = $1;
