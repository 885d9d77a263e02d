-- Claims from disjoint slices of the due work (measured with tests/bench/scale_bench.sh).
--
-- (With this migration engine/apply_transitions writes a leased row's due_at as its lease's expiry
-- instead of its call's start: the rows in flight leave the head of the due indexes, which every
-- pick walked, reading each row's lease; with 12 lanes the picks read 2.2 times the buffers they
-- read with 3, now 1.15 times. No schema change is needed for that: rows leased before it keep
-- their past due_at until they are settled.)
--
-- Every lane claimed the oldest due rows: the head of enrollments_due. Rows another lane had just
-- picked sit there, locked until that lane's cycle commits, and its leased rows (a calling row keeps
-- its past due_at) too; every pick walked over them (FOR UPDATE SKIP LOCKED tries the lock of each,
-- the lease check reads each heap row), so a pick's cost grew with the lanes of all processes:
-- Postgres CPU per transition +20 to +40 % from 3 lanes to 12 in one process.
--
-- Now the live rows are cut into 64 slices (enrollment_id % 64: ids are sequential, so a campaign's
-- leads spread evenly) with an index per slice in due order. A lane sweeps the slices: it takes
-- the oldest due rows of its current slice and moves to the next one when that has no more
-- (claim_pick_slices below, one statement); lanes start at different slices (spread by lane index,
-- and at random per process) and move at the same pace, so each walks rows no other lane holds.
-- Within a slice rows go in due order; every slice is visited in turn, so no due row waits more
-- than a sweep. A lane that finds too little in `hops` slices takes the rest in due order over all
-- slices (enrollments_due), as before: the sweep then is near the end of the due work.
-- 64 slices: more than the lanes of a deployment (at most 64 per process), few enough that an idle
-- lane's probes of empty slices cost little. worker.cpp (claim_slices) knows the number.
CREATE INDEX IF NOT EXISTS enrollments_due_slice
    ON enrollments ((enrollment_id % 64), due_at)
    WHERE status IN ('ready', 'calling', 'waiting');

-- claim_pick_slices(lim, start_slice, hops): up to `lim` ids of due rows no other transaction holds,
-- from slice start_slice on, at most `hops` slices, then (when the batch is not full) in due order
-- over all slices; with each row the slice the lane's sweep goes on from (the last slice that still
-- had rows, else the one after the last visited). The caller rolls back the locks with a savepoint
-- (engine/claim_pick says why) and locks the picked rows again with engine/claim_due.
-- Status and lease checks are engine/claim_pick's.
CREATE OR REPLACE FUNCTION claim_pick_slices(lim integer, start_slice integer, hops integer)
RETURNS TABLE (enrollment_id bigint, next_slice integer)
LANGUAGE plpgsql AS $$
DECLARE
    picked bigint[] := '{}';
    got bigint[];
    room integer := lim;
    s integer := ((start_slice % 64) + 64) % 64;
    i integer := 0;
BEGIN
    WHILE room > 0 AND i < hops LOOP
        got := ARRAY(
            SELECT e.enrollment_id
            FROM enrollments e
            WHERE e.enrollment_id % 64 = s
              AND e.status IN ('ready', 'calling', 'waiting')
              AND e.due_at <= now()
              AND (e.lease_expires_at IS NULL OR e.lease_expires_at < now())
            ORDER BY e.due_at
            LIMIT room
            FOR UPDATE OF e SKIP LOCKED);
        picked := picked || got;
        room := room - cardinality(got);
        IF room > 0 THEN
            s := (s + 1) % 64;  -- this slice has no more due rows for now
            i := i + 1;
        END IF;
    END LOOP;
    IF room > 0 THEN
        -- Rows this transaction locked above are not skipped by SKIP LOCKED: left out by id.
        picked := picked || ARRAY(
            SELECT e.enrollment_id
            FROM enrollments e
            WHERE e.status IN ('ready', 'calling', 'waiting')
              AND e.due_at <= now()
              AND (e.lease_expires_at IS NULL OR e.lease_expires_at < now())
              AND e.enrollment_id <> ALL(picked)
            ORDER BY e.due_at
            LIMIT room
            FOR UPDATE OF e SKIP LOCKED);
    END IF;
    RETURN QUERY SELECT p, s FROM unnest(picked) AS p;
END
$$;
