-- set_copy($1 event id, $2 the event it is a copy of): an unread message event (no lead) is the
-- same message as the catch-up sweep's copy under its lead; the inbox lists the latter only.
UPDATE events SET copy_of = $2 WHERE event_id = $1 AND lead_id IS NULL AND copy_of IS NULL;
