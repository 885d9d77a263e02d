-- wake_quota_waiters($1 account id): after the account's quota overrides changed, its leads that
-- wait for its day or week quota (the limits gate's reason "waiting for the <action> day quota
-- of account <id>") become due now, so a raised quota is used at once instead of when the local
-- day ends; a lead the new quota still denies is simply deferred again by the gate. Parked leads
-- (due_at infinity: paused campaign, unavailable account) stay parked. The reason's end is
-- compared with right(), not LIKE, so an id with % or _ matches only itself.
UPDATE enrollments
SET next_run_at = now(), due_at = now(), updated_at = now()
WHERE account_id = $1
  AND status IN ('ready', 'waiting')
  AND due_at > now() AND due_at <> 'infinity'
  AND reason LIKE 'waiting for the % quota of account %'
  AND right(reason, length($1) + 1) = ' ' || $1;
