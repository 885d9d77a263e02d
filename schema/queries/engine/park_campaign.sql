-- park_campaign($1 campaign id): the campaign was paused. Its live enrollments leave the head of
-- the claim index (due_at 'infinity'), so workers never walk past them; next_run_at keeps the
-- machine's own time. engine/unpark brings them back on resume.
-- SKIP LOCKED: this runs in a claim transaction that already holds the campaign's ledger account
-- (a refused reservation pauses it), while other workers hold some of the campaign's rows (their
-- claimed or settling batch) and wait for that same ledger account: waiting for their rows here
-- was a deadlock (seen with 4 workers racing on one budget). Rows skipped are written by their
-- holder; the claim never takes them while the campaign is paused (it only works active
-- campaigns), so skipping one costs at most a wasted look at the head of the index.
-- Returns the campaign's name, for the worker's log line.
WITH parked AS (
    UPDATE enrollments SET due_at = 'infinity'
    WHERE enrollment_id IN (
        SELECT enrollment_id FROM enrollments
        WHERE campaign_id = $1 AND status IN ('ready', 'calling', 'waiting') AND due_at <> 'infinity'
        FOR UPDATE SKIP LOCKED)
)
SELECT name FROM campaigns WHERE campaign_id = $1;
