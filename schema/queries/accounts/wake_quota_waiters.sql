-- wake_quota_waiters($1 account id): after the account's quota overrides or its quota day's time
-- zone changed, its leads that wait for its day or week quota or for a campaign's cap on it (wait
-- codes day_quota, week_quota and campaign_quota, written by the limits gate,
-- engine/limits_gate.cpp; the quota is always the lead's own sender's) become due now, so
-- a raised quota is used at once instead of when the local day ends; a lead the new quota still
-- denies is simply deferred again by the gate. Parked leads (due_at infinity: paused campaign,
-- unavailable account) stay parked. A call to be checked is due a second earlier than the others:
-- the claim takes due rows in due_at order, so a small raise goes to checking the calls already
-- made before new calls. Returns the leads woken (a change's two wake-ups count each once).
UPDATE enrollments
SET next_run_at = now() - CASE WHEN status = 'calling' THEN interval '1 second' ELSE interval '0' END,
    due_at = now() - CASE WHEN status = 'calling' THEN interval '1 second' ELSE interval '0' END,
    updated_at = now()
WHERE account_id = $1
  AND (status IN ('ready', 'waiting') OR (status = 'calling' AND reconcile AND lease_owner IS NULL))
  AND due_at > now() AND due_at <> 'infinity'
  AND wait_code IN ('day_quota', 'week_quota', 'campaign_quota')
RETURNING enrollment_id;
