-- release_start($1 campaign id, $2 the old start_at, $3 the old start_at and its opening delay,
-- $4 the new start: the new start_at, or now when it is later or there is none; $2..$4 in seconds
-- since the epoch; $5 the new entry step, $6 its delay in ms). A new version that moves start_at
-- earlier, or removes it, releases the live leads not leased by a worker that the old start_at
-- held (hold_until_start, or enrollment: due at it, or at it and the opening delay). They are due
-- at the new start, those at the entry step after its delay. Rows due at another instant keep it,
-- and nothing moves later here.
WITH released AS (
    SELECT e.enrollment_id,
           to_timestamp($4::double precision) + CASE WHEN e.step = $5::text THEN make_interval(secs => $6::bigint / 1000.0)
                                  ELSE interval '0' END AS until
    FROM enrollments e
    WHERE e.campaign_id = $1 AND e.status IN ('ready', 'waiting') AND e.lease_owner IS NULL
      AND e.next_run_at IN (to_timestamp($2::double precision), to_timestamp($3::double precision))
)
UPDATE enrollments e
SET next_run_at = r.until,
    due_at = CASE WHEN e.due_at = 'infinity' THEN e.due_at ELSE r.until END,
    updated_at = now()
FROM released r
WHERE e.enrollment_id = r.enrollment_id AND r.until < e.next_run_at;
