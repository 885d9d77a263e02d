-- wake_budget_waits($1 campaign id): the campaign's budget caps were changed. Its leads that wait
-- for a per-day or per-account cap (wait codes day_budget and account_budget, written by
-- the ledger's refusal, planner::ledger_refused) become due now; a lead whose cap still refuses it waits again
-- with the same code. Parked rows (due_at infinity: paused campaign, unavailable account) are
-- left to engine/unpark. A call to be checked (calling, reconcile, no lease) whose check waits for
-- a cap is woken too, a second earlier than the others: the claim takes due rows in due_at order,
-- so a small raise goes to checking the calls already made before new calls. Returns the leads
-- woken (a change's two wake-ups count each once).
UPDATE enrollments
SET due_at = now() - CASE WHEN status = 'calling' THEN interval '1 second' ELSE interval '0' END,
    next_run_at = now() - CASE WHEN status = 'calling' THEN interval '1 second' ELSE interval '0' END
WHERE campaign_id = $1
  AND (status IN ('ready', 'waiting') OR (status = 'calling' AND reconcile AND lease_owner IS NULL))
  AND due_at < 'infinity'
  AND next_run_at > now()
  AND wait_code IN ('day_budget', 'account_budget')
RETURNING enrollment_id;
