-- The lifecycle trigger of migration 0017 without its join of the transition tables.
--
-- campaign_lifecycle_on_update found the leads that went live -> finished (and back) by joining
-- new_rows to old_rows on enrollment_id. The planner estimates a transition table from the rows
-- it holds when the statement is planned, and PL/pgSQL keeps that plan for the session: a lane
-- whose first finishing statement had a row or two kept a nested loop, and then compared every
-- row of each 500-row settle with every other (250,000 comparisons, 30 to 140 ms a statement;
-- seen with 4 worker processes in tests/bench/engine_bench.sh, where it took 1.8 s of Postgres's
-- time in a 10 s run, against too little to list with 1 process, whose lanes happened to plan
-- it on full batches).
--
-- Now each row's two versions are paired by grouping on enrollment_id: a sort or a hash, whatever
-- the estimate, so the cost stays linear in the statement's rows. Same campaigns, same order.
CREATE OR REPLACE FUNCTION campaign_lifecycle_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cid bigint;
BEGIN
    -- Most statements of the worker (claims, settles that keep their leads live) end no lead and
    -- revive none: one pass over the new rows.
    IF EXISTS (SELECT 1 FROM new_rows n WHERE n.status NOT IN ('ready', 'calling', 'waiting')) THEN
        -- campaigns whose rows went live -> finished, in one order (the advisory locks)
        FOR cid IN
            SELECT DISTINCT v.campaign_id
            FROM (SELECT n.enrollment_id, n.campaign_id, 1 AS side FROM new_rows n
                  WHERE n.status NOT IN ('ready', 'calling', 'waiting')
                  UNION ALL
                  SELECT o.enrollment_id, o.campaign_id, 0 FROM old_rows o
                  WHERE o.status IN ('ready', 'calling', 'waiting')) v
            GROUP BY v.enrollment_id, v.campaign_id
            HAVING min(v.side) = 0 AND max(v.side) = 1
            ORDER BY 1
        LOOP
            PERFORM campaign_complete_if_idle(cid);
        END LOOP;
    END IF;
    -- A finished lead made live again (an operator's lead operation): its completed campaign is
    -- active again. Rare: only statements that touch finished rows look.
    IF EXISTS (SELECT 1 FROM old_rows o WHERE o.status NOT IN ('ready', 'calling', 'waiting')) THEN
        FOR cid IN
            SELECT DISTINCT v.campaign_id
            FROM (SELECT n.enrollment_id, n.campaign_id, 1 AS side FROM new_rows n
                  WHERE n.status IN ('ready', 'calling', 'waiting')
                  UNION ALL
                  SELECT o.enrollment_id, o.campaign_id, 0 FROM old_rows o
                  WHERE o.status NOT IN ('ready', 'calling', 'waiting')) v
            JOIN campaigns c ON c.campaign_id = v.campaign_id
            WHERE c.state = 'completed'
            GROUP BY v.enrollment_id, v.campaign_id
            HAVING min(v.side) = 0 AND max(v.side) = 1
            ORDER BY 1
        LOOP
            PERFORM campaign_reopen(cid);
        END LOOP;
    END IF;
    RETURN NULL;
END $$;
