-- Statements whose cost could grow with the tables, whatever a cached plan or an estimate said
-- (found by a review, each reproduced with EXPLAIN ANALYZE on tables of some 300,000 rows).
--
-- 1. A campaign's live rows by an index of their own. campaign_complete_if_idle (migration 0017)
--    looks for one live row of a campaign whose last leads a statement ended; so do pausing,
--    cancelling (engine/park_campaign, campaigns/cancel_enrollments) and `serve`'s completion of
--    idle campaigns at each credits read (campaigns/complete_idle). With no index on the campaign
--    and the status together (migration 0010 dropped one), the planner took the campaign and the
--    status as independent: for a campaign near its end it guessed thousands of live rows and
--    read the whole table (20 ms at 200,000 rows, inside the completion's advisory lock on the
--    worker's settle path), or walked every live row of every campaign, or every row of the
--    campaign. This index holds only live rows: it costs an entry when a row's new version is
--    live and not a heap-only update (about one per call, as enrollments_due).
CREATE INDEX IF NOT EXISTS enrollments_live_campaign
    ON enrollments (campaign_id)
    WHERE status IN ('ready', 'calling', 'waiting');
-- The index alone does not do it for the completion check: EXISTS needs one row, and with the
-- estimate of thousands of matches a sequential scan looks as if it would find one at once. The
-- function's statements are planned without sequential scans (it reads campaigns and the funnel
-- by key, and the live rows by the index above: an index-only scan, 0.1 ms against 20 ms).
ALTER FUNCTION campaign_complete_if_idle(bigint) SET enable_seqscan = off;

-- 2. claim_pick_slices (migration 0019): its fall-back walk in due order left out the rows the
--    slices had already picked with `<> ALL(picked)`, a comparison with each picked id per row
--    walked once PL/pgSQL used a generic plan (the array is then a parameter, not hashed). Now a
--    hashed subplan.
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
              AND e.enrollment_id NOT IN (SELECT unnest(picked))
            ORDER BY e.due_at
            LIMIT room
            FOR UPDATE OF e SKIP LOCKED);
    END IF;
    RETURN QUERY SELECT p, s FROM unnest(picked) AS p;
END
$$;
