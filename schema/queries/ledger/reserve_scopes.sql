-- reserve_scopes($1 ledger_pair_row[] {campaign_id, sender}, $2 UTC day 'YYYY-MM-DD'): for each (campaign,
-- sender), the scopes a reservation draws from — the campaign, and the sender account and the
-- day when the campaign has those caps — with each scope's available balance as read, not
-- locked: engine/ledger.cpp then locks them with lock_available (in scope_id order, the order of
-- every ledger writer, so concurrent batches wait for each other and never deadlock) and decides
-- from the balances the lock returns; the worker's fast path decides from these and lets
-- apply_balances and the CHECK constraints have the last word (engine/ledger.hpp).
-- scope_id 0: the scope does not exist yet (account and day scopes are created on first use by
-- ensure_scopes; a campaign without a campaign scope has no budget and reserves nothing).
WITH x AS (
    SELECT DISTINCT x.campaign_id, x.sender
    FROM rows_of($1::ledger_pair_row[]) AS x
), want AS (
    SELECT x.campaign_id, x.sender, 'campaign'::ledger_scope_kind AS kind, s.scope_id
    FROM x LEFT JOIN ledger_scopes s ON s.campaign_id = x.campaign_id AND s.kind = 'campaign'
    UNION ALL
    SELECT x.campaign_id, x.sender, 'account', s.scope_id
    FROM x JOIN ledger_budgets b ON b.campaign_id = x.campaign_id AND b.per_account IS NOT NULL
    LEFT JOIN ledger_scopes s ON s.campaign_id = x.campaign_id AND s.kind = 'account' AND s.sender = x.sender
    UNION ALL
    SELECT x.campaign_id, x.sender, 'day', s.scope_id
    FROM x JOIN ledger_budgets b ON b.campaign_id = x.campaign_id AND b.per_day IS NOT NULL
    LEFT JOIN ledger_scopes s ON s.campaign_id = x.campaign_id AND s.kind = 'day' AND s.day = $2::date
), available AS MATERIALIZED (
    -- by primary key from an array (an init plan): a join with `want`, which the planner guesses
    -- at hundreds of rows from rows_of's estimate, hashed the whole of ledger_accounts until it
    -- was some 100,000 rows (it gains rows with every day scope of a capped campaign)
    SELECT a.scope_id, a.balance
    FROM ledger_accounts a
    WHERE a.kind = 'available' AND a.scope_id = ANY(ARRAY(SELECT scope_id FROM want WHERE scope_id IS NOT NULL))
)
SELECT w.campaign_id, w.sender, w.kind::text, COALESCE(w.scope_id, 0), COALESCE(l.balance, 0)
FROM want w LEFT JOIN available l ON l.scope_id = w.scope_id;
