-- sender_quotas($1 a campaign's senders as a JSON array of ids): those with quotas of their own
-- (accounts.quotas, migration 0007; `accounts limits`), for the apply's warning about pacing and
-- ramp-up (engine/campaign_lifecycle.cpp, apply_warnings), named by label when they have one. By
-- primary key, a few rows.
SELECT COALESCE(label, account_id), quotas::text
FROM accounts
WHERE account_id IN (SELECT jsonb_array_elements_text($1::jsonb))
  AND quotas IS NOT NULL
ORDER BY 1;
