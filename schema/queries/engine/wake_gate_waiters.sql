-- wake_gate_waiters: when a worker starts (its pacing and quota settings may have changed with
-- the restart), the leads the limits gate parked for a quota or the pacing become due now, so
-- the gate decides again under the settings now in force; a lead still denied is parked again
-- with the new wait. Cooldowns (the platform said so), parked rows (due_at infinity: paused
-- campaign, unavailable account) and the leads queued for the key's rate stay as they are: the
-- latter hold turns in the queue every worker of the key shares (Redis), and come back at them;
-- made due now, each took a new turn at the queue's end and its old one passed unused, which
-- idled the key for the queue's length after every restart. Returns the count woken.
WITH woken AS (
    UPDATE enrollments
    SET next_run_at = now(), due_at = now(), updated_at = now()
    WHERE status = 'ready'
      AND due_at > now() AND due_at <> 'infinity'
      AND wait_code IN ('day_quota', 'week_quota', 'campaign_quota', 'pacing')
    RETURNING 1
)
SELECT count(*) FROM woken
