-- wake($1 lead, $2 account): an event for this lead arrived; its live enrollments on this
-- account become due now so a worker applies the event. Every live row is touched (no
-- condition on due_at): taking the row lock orders this transaction against a worker's
-- concurrent settle, which either sees the committed event (its wake_pending statement takes a
-- fresh snapshot) or runs after and is overwritten here. A row leased by an in-flight call
-- stays with its worker; its settle sees the unapplied event. A parked row (paused campaign,
-- unavailable account) stays parked; engine/unpark wakes it and the claim applies the event.
UPDATE enrollments SET due_at = CASE WHEN due_at = 'infinity' THEN due_at ELSE now() END
WHERE lead_id = $1 AND account_id = $2 AND status IN ('ready', 'calling', 'waiting');
