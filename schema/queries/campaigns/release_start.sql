-- release_start($1 campaign id, $2 the old start_at, $3 the old start_at and its opening delay,
-- $4 the new start: the new start_at, or now when it is later or there is none; $2..$4 in seconds
-- since the epoch; $5 the new entry step, $6 its delay in ms). A new version that moves start_at
-- earlier, or removes it, releases the live leads that the old start_at held:
-- - those not yet worked (at the entry step, no call made) that wait for the old start are due at
--   the new start, after the entry step's delay;
-- - the others held by their due time only (campaigns/hold_until_start, engine/claim_due) are due
--   at the new start: the claim then applies the inbox events that came while they were held (an
--   acceptance, a reply) and puts a row with none back to its own next run (a wait's timeout, a
--   delay's end), as it does a woken row. A row a hold wrote its next run over (an older version
--   of hold_until_start) keeps it: releasing it to now would end its wait or its delay early.
-- Nothing moves later here.
WITH released AS (
    SELECT e.enrollment_id, k.entry
    FROM enrollments e
    CROSS JOIN LATERAL (
        SELECT e.step = $5::text
               AND e.next_run_at IN (to_timestamp($2::double precision), to_timestamp($3::double precision))
               AND NOT EXISTS (SELECT 1 FROM step_attempts a WHERE a.enrollment_id = e.enrollment_id) AS entry
    ) k
    WHERE e.campaign_id = $1 AND e.status IN ('ready', 'waiting') AND e.lease_owner IS NULL
      AND (k.entry OR e.due_at = to_timestamp($2::double precision))
),
until AS (
    SELECT enrollment_id, entry,
           to_timestamp($4::double precision) + make_interval(secs => $6::bigint / 1000.0) AS entry_until
    FROM released
)
UPDATE enrollments e
SET next_run_at = CASE WHEN u.entry THEN u.entry_until ELSE e.next_run_at END,
    due_at = CASE WHEN e.due_at = 'infinity' THEN e.due_at
                  WHEN u.entry THEN u.entry_until
                  ELSE to_timestamp($4::double precision) END,
    updated_at = now()
FROM until u
WHERE e.enrollment_id = u.enrollment_id AND (NOT u.entry OR u.entry_until < e.next_run_at);
