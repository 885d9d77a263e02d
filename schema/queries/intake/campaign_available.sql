-- campaign_available($1 campaign id): the credits the campaign's budget has available (0 rows:
-- no budget in the ledger). The sweep reads a campaign's pending invitations only while it has
-- some: its reads are charged to it as they come, with no reservation before them.
SELECT a.balance
FROM ledger_scopes s JOIN ledger_accounts a ON a.scope_id = s.scope_id AND a.kind = 'available'
WHERE s.campaign_id = $1 AND s.kind = 'campaign';
