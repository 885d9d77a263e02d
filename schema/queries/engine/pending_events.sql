-- pending_events($1 enrollment ids as a JSON array): inbox events not yet applied to each of
-- the claimed enrollments (same lead, same sender account, after the enrollment's cursor).
SELECT e.enrollment_id, ev.event_id, ev.kind
FROM enrollments e
JOIN events ev ON ev.lead_id = e.lead_id AND ev.account_id = e.account_id AND ev.event_id > e.event_cursor
WHERE e.enrollment_id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb))
ORDER BY e.enrollment_id, ev.event_id;
