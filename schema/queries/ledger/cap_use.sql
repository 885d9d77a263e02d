-- cap_use($1 campaign, $2 UTC day 'YYYY-MM-DD'): what the campaign's per-day cap (that day's
-- scope) and per-account caps (one scope per sender) have reserved, spent and left. Scopes of a
-- cap since removed are listed too (budget NULL).
SELECT scope::text, COALESCE(sender, to_char(day, 'YYYY-MM-DD')), COALESCE(budget, -1),
       COALESCE(reserved, 0), COALESCE(spent, 0), COALESCE(available, 0)
FROM ledger_scope_balances
WHERE campaign_id = $1 AND (scope = 'account' OR (scope = 'day' AND day = $2::date))
ORDER BY scope, sender;
