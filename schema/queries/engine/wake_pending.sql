-- wake_pending($1 JSON array of enrollment ids): run right after apply_transitions/settle in
-- the same transaction, over the rows they released (a row left leased for its call is not claimed
-- before the cycle that settles it, which releases it through this statement or reads its inbox
-- again, engine/pending_events). An inbox event committed while those statements ran
-- (their snapshot could not see it, and they overwrote the wake its writer had set) would
-- otherwise sleep until the step's deadline; this statement takes a fresh snapshot (READ
-- COMMITTED) and makes such enrollments due now. Events committed later wake the row themselves
-- (events/wake).
UPDATE enrollments e SET due_at = now()
WHERE e.enrollment_id = ANY(translate($1, '[]', '{}')::bigint[])  -- see engine/pending_events
  AND e.status::text IN ('ready', 'calling', 'waiting')  -- as text: see engine/settle
  AND e.due_at > now() AND e.due_at < 'infinity'  -- parked rows wake with engine/unpark
  AND EXISTS (SELECT 1 FROM events ev WHERE ev.lead_id = e.lead_id AND ev.account_id = e.account_id
              AND ev.event_id > e.event_cursor);
