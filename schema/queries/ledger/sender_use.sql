-- sender_use($1 campaign, $2 sender account id): what the campaign's scope for that sender (its
-- per-account cap's) holds for calls in flight and has spent; 0 when it has none (a cap set later
-- funds a new scope with the whole cap). An apply refuses to send its audience search through a
-- sender with nothing left of it (engine/campaign_apply: search_refusal).
SELECT COALESCE(sum(a.balance) FILTER (WHERE a.kind IN ('reserved', 'spent')), 0)::bigint
FROM ledger_scopes s JOIN ledger_accounts a ON a.scope_id = s.scope_id
WHERE s.campaign_id = $1 AND s.kind = 'account' AND s.sender = $2
