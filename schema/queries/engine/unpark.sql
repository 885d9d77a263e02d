-- unpark($1 campaign id or 0, $2 account id or ''): a campaign resumed or an account
-- reconnected. Parked rows that may run again (active campaign, connected account) become due
-- now; the claim re-reads each one and puts it back to its own time, applying inbox events that
-- arrived meanwhile. With an account, so do its leads whose call a worker held at send time
-- (wait code `throttled`): the hold may have been for the account being unavailable, and the
-- gate decides again (a cooldown still running parks them again). Such a row is due now also
-- when the account's pause parked it after the hold (its next_run_at was the hold's end).
-- A lead that waited for a day or per-account budget cap is due now too: the cap may have been
-- raised or removed while the campaign was paused (that change's wake-up leaves parked rows
-- alone), and the ledger decides again (a cap still used up defers it again).
UPDATE enrollments e
SET due_at = now(),
    next_run_at = CASE WHEN e.due_at = 'infinity'
                            AND NOT (e.account_id = $2 AND e.status = 'ready'
                                     AND coalesce(e.wait_code, '') = 'throttled')  -- wait_code NULL: none
                            AND coalesce(e.wait_code, '') NOT IN ('day_budget', 'account_budget')
                       THEN e.next_run_at
                       ELSE now() END  -- a held row's was the hold's end
WHERE (e.campaign_id = $1 OR e.account_id = $2)
  AND e.status IN ('ready', 'calling', 'waiting')
  AND (e.due_at = 'infinity'
       OR (e.account_id = $2 AND e.status = 'ready' AND e.wait_code = 'throttled' AND e.due_at > now()))
  AND EXISTS (SELECT 1 FROM campaigns c WHERE c.campaign_id = e.campaign_id AND c.state = 'active')
  AND EXISTS (SELECT 1 FROM accounts a WHERE a.account_id = e.account_id AND a.connected);
