-- wake_gate_waiters: when a worker starts (its pacing, quota and key-rate settings may have
-- changed with the restart), the leads the limits gate parked for a quota, the pacing or the
-- key's rate become due now, so the gate decides again under the settings now in force; a lead
-- still denied is parked again with the new wait. Cooldowns (the platform said so) and parked
-- rows (due_at infinity: paused campaign, unavailable account) stay as they are. Returns the
-- count woken.
WITH woken AS (
    UPDATE enrollments
    SET next_run_at = now(), due_at = now(), updated_at = now()
    WHERE status = 'ready'
      AND due_at > now() AND due_at <> 'infinity'
      AND wait_code IN ('key_rate', 'day_quota', 'week_quota', 'campaign_quota', 'pacing')
    RETURNING 1
)
SELECT count(*) FROM woken
