-- ensure_campaign_scope($1 campaign): the campaign's own scope and its four accounts, empty; the
-- budget is granted by set_budget. ON CONFLICT: created once.
WITH s AS (
    INSERT INTO ledger_scopes (campaign_id, kind) VALUES ($1, 'campaign')
    ON CONFLICT DO NOTHING
    RETURNING scope_id
)
INSERT INTO ledger_accounts (scope_id, kind)
SELECT s.scope_id, k.kind FROM s CROSS JOIN unnest(enum_range(NULL::ledger_account_kind)) AS k(kind);
