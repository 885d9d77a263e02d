-- unpark($1 campaign id or 0, $2 account id or ''): a campaign resumed or an account
-- reconnected. Parked rows that may run again (active campaign, connected account) become due
-- now; the claim re-reads each one and puts it back to its own time, applying inbox events that
-- arrived meanwhile.
UPDATE enrollments e SET due_at = now()
WHERE (e.campaign_id = $1 OR e.account_id = $2)
  AND e.status IN ('ready', 'calling', 'waiting')
  AND e.due_at = 'infinity'
  AND EXISTS (SELECT 1 FROM campaigns c WHERE c.campaign_id = e.campaign_id AND c.state = 'active')
  AND EXISTS (SELECT 1 FROM accounts a WHERE a.account_id = e.account_id AND a.connected);
