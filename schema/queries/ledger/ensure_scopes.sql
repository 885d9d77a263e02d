-- ensure_scopes($1 ledger_pair_row[] {campaign_id, sender}, $2 UTC day 'YYYY-MM-DD'): creates the account
-- and day scopes those campaigns' caps call for and do not have yet, each funded with its cap
-- (a grant entry; a day scope with its cap less that day's spend so far, an account scope less
-- the campaign's spend through the sender so far). The budget rows are read FOR SHARE so a concurrent set_budget either commits
-- first (the new cap is used) or sees the new scope when it lists the campaign's scopes.
-- ON CONFLICT DO NOTHING: a concurrent creator of the same scope wins, nothing is funded twice.
WITH x AS (
    SELECT DISTINCT x.campaign_id, x.sender
    FROM rows_of($1::ledger_pair_row[]) AS x
), b AS (
    SELECT campaign_id, per_account, per_day FROM ledger_budgets
    WHERE campaign_id IN (SELECT campaign_id FROM x)
    FOR SHARE
), want AS (
    SELECT b.campaign_id, 'account'::ledger_scope_kind AS kind, x.sender, NULL::date AS day, b.per_account AS cap
    FROM b JOIN x ON x.campaign_id = b.campaign_id WHERE b.per_account IS NOT NULL
    UNION
    SELECT b.campaign_id, 'day'::ledger_scope_kind, NULL, $2::date, b.per_day
    FROM b WHERE b.per_day IS NOT NULL
), ins AS (
    INSERT INTO ledger_scopes (campaign_id, kind, sender, day)
    SELECT campaign_id, kind, sender, day FROM want
    ON CONFLICT DO NOTHING
    RETURNING scope_id, campaign_id, kind, sender, day
), fresh AS (
    -- A day scope is funded with the cap less what the campaign's transfers of that day already
    -- hold or cost (made while it had no day cap): the cap counts the whole day. An account scope
    -- likewise with what its transfers through the sender hold or cost: the cap counts the
    -- campaign's whole life (migration 0034).
    SELECT i.scope_id,
           CASE WHEN i.kind = 'day'
                THEN GREATEST(w.cap - (SELECT o.held + o.spent FROM ledger_day_spend_outside(i.campaign_id, i.day, 0) o), 0)
                WHEN i.kind = 'account'
                THEN GREATEST(w.cap - (SELECT o.held + o.spent FROM ledger_sender_spend_outside(i.campaign_id, i.sender, 0) o), 0)
                ELSE w.cap END AS cap
    FROM ins i JOIN want w ON w.campaign_id = i.campaign_id AND w.kind = i.kind
        AND w.sender IS NOT DISTINCT FROM i.sender AND w.day IS NOT DISTINCT FROM i.day
), acc AS (
    INSERT INTO ledger_accounts (scope_id, kind, balance)
    SELECT f.scope_id, k.kind, CASE k.kind WHEN 'available' THEN f.cap WHEN 'funding' THEN -f.cap ELSE 0 END
    FROM fresh f CROSS JOIN unnest(enum_range(NULL::ledger_account_kind)) AS k(kind)
)
INSERT INTO ledger_entries (scope_id, kind, debit, credit, amount)
SELECT scope_id, 'grant', 'available', 'funding', cap FROM fresh WHERE cap > 0;
