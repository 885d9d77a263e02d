-- status_now($1 enrollment ids, a bigint array literal): their status as committed now, read after
-- leads/lock passed them over (a worker's claim made them `calling`, or they finished, while the
-- operation ran): the refusal says what they are now, not what leads/match read before. A call to
-- check (calling, `reconcile`, no live lease) is nothing in flight: a check that waits (for a cap,
-- the reconcile delay), said as such.
SELECT enrollment_id, status::text,
       status = 'calling' AND reconcile AND (lease_owner IS NULL OR lease_expires_at < now()) AS to_check
FROM enrollments WHERE enrollment_id = ANY($1::bigint[]);
