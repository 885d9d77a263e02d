-- budget_scopes($1 campaign, $2 first UTC day 'YYYY-MM-DD'): the scopes a budget change adjusts:
-- the campaign's, its sender accounts', and its days from $2 on (past days keep their cap).
SELECT scope_id, kind::text
FROM ledger_scopes
WHERE campaign_id = $1 AND (kind <> 'day' OR day >= $2::date)
ORDER BY scope_id;
