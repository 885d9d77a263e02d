-- release_start($1 campaign id, $2 the old start_at, $3 the old start_at and its opening delay,
-- $4 the new start: the new start_at, or now when it is later or there is none; $2..$4 in seconds
-- since the epoch; $5 the new entry step, $6 its delay in ms). A new version that moves start_at
-- earlier, or removes it, releases the live leads not yet worked (at the entry step, no call
-- made) that the old start_at held: they are due at the new start, after the entry step's delay.
-- A lead past them that a later start_at held keeps the old start_at: the hold wrote over its
-- own due time (a wait's timeout, a delay's end), and releasing it to now would end its wait or
-- its delay early. Nothing moves later here.
WITH released AS (
    SELECT e.enrollment_id,
           to_timestamp($4::double precision) + make_interval(secs => $6::bigint / 1000.0) AS until
    FROM enrollments e
    WHERE e.campaign_id = $1 AND e.status IN ('ready', 'waiting') AND e.lease_owner IS NULL AND e.step = $5::text
      AND e.next_run_at IN (to_timestamp($2::double precision), to_timestamp($3::double precision))
      AND NOT EXISTS (SELECT 1 FROM step_attempts a WHERE a.enrollment_id = e.enrollment_id)
)
UPDATE enrollments e
SET next_run_at = r.until,
    due_at = CASE WHEN e.due_at = 'infinity' THEN e.due_at ELSE r.until END,
    updated_at = now()
FROM released r
WHERE e.enrollment_id = r.enrollment_id AND r.until < e.next_run_at;
