-- budget_scopes($1 campaign, $2 first UTC day 'YYYY-MM-DD'): the scopes a budget change adjusts:
-- the campaign's, its sender accounts', and its days from $2 on (past days keep their cap), with
-- a day scope's day or an account scope's sender.
SELECT scope_id, kind::text, COALESCE(to_char(day, 'YYYY-MM-DD'), sender, '')
FROM ledger_scopes
WHERE campaign_id = $1 AND (kind <> 'day' OR day >= $2::date)
ORDER BY scope_id;
