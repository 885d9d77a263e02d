-- wake($1 lead, $2 account): an event for this lead arrived; its live enrollments on this
-- account become due now so a worker applies the event (a row leased by an in-flight call is
-- picked up when its settle sees the unapplied event).
UPDATE enrollments SET due_at = now()
WHERE lead_id = $1 AND account_id = $2 AND status IN ('ready', 'calling', 'waiting') AND due_at > now();
