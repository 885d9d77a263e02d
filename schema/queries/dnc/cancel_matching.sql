-- cancel_matching($1 JSON array of canonical urls, $2 JSON array of lower-cased companies): in
-- the transaction that adds do-not-contact entries, every live enrollment of a matching lead that
-- is not in a call ends as cancelled, "stopped: do-not-contact". A `calling` row has a request in
-- flight: it is left to its worker, whose check before each side-effecting call stops it.
-- Rows a worker's claim holds are waited for, then re-checked (READ COMMITTED): one that became
-- `calling` meanwhile is left alone too.
-- The leads by URL through their unique index, and by company (no index: a scan) only when
-- companies are given: an OR of the two read every lead for each entry added (80 ms at 320,000
-- leads), and `serve` adds one for each reply marked not interested.
WITH m AS (
    SELECT l.lead_id FROM leads l
    WHERE l.canonical_url = ANY(ARRAY(SELECT jsonb_array_elements_text($1::jsonb)))
    UNION
    SELECT l.lead_id FROM leads l
    WHERE jsonb_array_length($2::jsonb) > 0
      AND lower(btrim(l.fields->>'company')) = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb)))
)
UPDATE enrollments e
SET status = 'cancelled', reason = 'stopped: do-not-contact', wait_code = NULL, reconcile = false, lease_owner = NULL,
    lease_expires_at = NULL, finished_at = now(), updated_at = now()
WHERE e.lead_id IN (SELECT lead_id FROM m) AND e.status IN ('ready', 'waiting')
RETURNING e.enrollment_id;
