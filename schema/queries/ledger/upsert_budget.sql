-- upsert_budget($1 campaign, $2 total, $3 per account or -1 for none, $4 per day or -1 for none):
-- the budgets as configured; set_budget then moves the scopes' balances to match.
INSERT INTO ledger_budgets (campaign_id, total, per_account, per_day)
VALUES ($1, $2, NULLIF($3::bigint, -1), NULLIF($4::bigint, -1))
ON CONFLICT (campaign_id) DO UPDATE
SET total = EXCLUDED.total, per_account = EXCLUDED.per_account, per_day = EXCLUDED.per_day, updated_at = now();
