-- get_budget($1 campaign): total, per account, per day (-1: no such cap); no row: no budget.
SELECT total, COALESCE(per_account, -1), COALESCE(per_day, -1) FROM ledger_budgets WHERE campaign_id = $1;
