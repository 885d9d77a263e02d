-- find($1 name): the campaign, its state and current version, with that version's digest.
-- Locked FOR NO KEY UPDATE, not FOR UPDATE: apply and budget changes of one campaign still take
-- turns, but a row that references the campaign (a funnel_counts shard or a ledger scope a
-- worker inserts while it holds the campaign's ledger rows) can still be written. FOR UPDATE
-- blocked that row's key check, while `budget set` waited for those ledger rows: a deadlock.
SELECT c.campaign_id, c.state::text, c.current_version, v.digest
FROM campaigns c JOIN campaign_versions v ON v.campaign_id = c.campaign_id AND v.version = c.current_version
WHERE c.name = $1
FOR NO KEY UPDATE OF c;
