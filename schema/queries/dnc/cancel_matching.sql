-- cancel_matching($1 JSON array of canonical urls, $2 JSON array of lower-cased companies): in
-- the transaction that adds do-not-contact entries, every live enrollment of a matching lead
-- (dnc_matching_leads, migration 0027) that is not in a call ends as cancelled, "stopped:
-- do-not-contact". A `calling` row has a request in flight: it is left to its worker, whose check
-- before each side-effecting call stops it.
-- Rows a worker's claim holds are waited for, then re-checked (READ COMMITTED): one that became
-- `calling` meanwhile is left alone too.
UPDATE enrollments e
SET status = 'cancelled', reason = 'stopped: do-not-contact', wait_code = NULL, reconcile = false, lease_owner = NULL,
    lease_expires_at = NULL, finished_at = now(), updated_at = now()
WHERE e.lead_id IN (SELECT m.lead_id FROM dnc_matching_leads($1::jsonb, $2::jsonb) AS m(lead_id)) AND e.status IN ('ready', 'waiting')
RETURNING e.enrollment_id;
