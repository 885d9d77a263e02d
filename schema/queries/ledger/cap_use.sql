-- cap_use($1 campaign, $2 UTC day 'YYYY-MM-DD'): what the campaign's per-day cap (that day's
-- scope) and per-account caps (one scope per sender) have reserved, spent and left. Scopes of a
-- cap since removed are listed too (budget NULL). The day's row counts the whole day, as the cap
-- does: also what the day's transfers outside its scope hold or cost (made while the campaign had
-- no day cap; ledger/day_spend_outside). A day cap whose scope is still to be created (nothing
-- reserved under it that day yet) has its row too: its scope will be funded with what it says left.
-- A sender's row counts the campaign's whole life through it in the same way (migration 0034),
-- and a sender that spent while there was no per-account cap has its row once there is one.
WITH outside AS (
    SELECT s.scope_id, t.held, t.spent
    FROM (SELECT scope_id FROM ledger_scopes WHERE campaign_id = $1 AND kind = 'day' AND day = $2::date
          UNION ALL SELECT 0) s
    CROSS JOIN LATERAL ledger_day_spend_outside($1, $2::date, s.scope_id) t
), by_sender AS (
    -- One pass over the campaign's transfers: per sender, what they hold and cost outside its
    -- scope (all of it for a sender with no scope), as ledger_sender_spend_outside counts it.
    SELECT t.sender, s.scope_id,
           COALESCE(sum(t.reserved) FILTER (WHERE t.state = 'pending' AND NOT (COALESCE(s.scope_id, 0) = ANY(t.scopes))), 0)::bigint AS held,
           COALESCE(sum(t.posted) FILTER (WHERE t.state = 'posted' AND NOT (COALESCE(s.scope_id, 0) = ANY(t.scopes))), 0)::bigint AS spent
    FROM ledger_transfers t
    LEFT JOIN ledger_scopes s ON s.campaign_id = $1 AND s.kind = 'account' AND s.sender = t.sender
    WHERE t.campaign_id = $1 AND t.sender <> ''
    GROUP BY t.sender, s.scope_id
), rows AS (
    SELECT b.scope::text AS scope, COALESCE(b.sender, to_char(b.day, 'YYYY-MM-DD')) AS key, COALESCE(b.budget, -1) AS budget,
           COALESCE(b.reserved, 0) + COALESCE(o.held, 0) + COALESCE(so.held, 0) AS reserved,
           COALESCE(b.spent, 0) + COALESCE(o.spent, 0) + COALESCE(so.spent, 0) AS spent,
           COALESCE(b.available, 0) AS available
    FROM ledger_scope_balances b
    LEFT JOIN outside o ON b.scope = 'day' AND o.scope_id = b.scope_id
    LEFT JOIN by_sender so ON b.scope = 'account' AND so.scope_id = b.scope_id
    WHERE b.campaign_id = $1 AND (b.scope = 'account' OR (b.scope = 'day' AND b.day = $2::date))
    UNION ALL
    SELECT 'day', $2::text, g.per_day, o.held, o.spent, GREATEST(g.per_day - o.held - o.spent, 0)
    FROM ledger_budgets g JOIN outside o ON o.scope_id = 0
    WHERE g.campaign_id = $1 AND g.per_day IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM ledger_scopes s WHERE s.campaign_id = $1 AND s.kind = 'day' AND s.day = $2::date)
    UNION ALL
    SELECT 'account', u.sender, g.per_account, u.held, u.spent, GREATEST(g.per_account - u.held - u.spent, 0)
    FROM ledger_budgets g JOIN by_sender u ON u.scope_id IS NULL
    WHERE g.campaign_id = $1 AND g.per_account IS NOT NULL
)
SELECT scope, key, budget, reserved, spent, available FROM rows ORDER BY scope, key;
