-- mark($1 event id, $2 mark, $3 by): records the operator's mark on a reply.
UPDATE events SET inbox_mark = $2, marked_by = $3, marked_at = now() WHERE event_id = $1 AND kind = 'message';
