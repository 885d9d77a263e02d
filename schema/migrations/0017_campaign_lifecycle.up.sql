-- The campaign lifecycle: campaigns become `completed` when nothing of them is live, and active
-- again when new leads are enrolled; optional start and end dates.
--
-- 1. Dates (campaign file: start_at, end_at). Apply writes them here from the applied version.
--    start_at: apply enrolls leads with next_run_at (and due_at) not before it, and moves those
--    already enrolled when it moves later; the worker never runs a row before its next_run_at.
--    end_at: the claim (engine/claim_due) does not work a campaign whose end_at has passed: it
--    pauses it with reason 'ended: ...' and parks the rows it picked; the others are parked as
--    they come due. Re-applying with a later (or no) end_at resumes a campaign paused that way.
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS start_at timestamptz;
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS end_at timestamptz;
ALTER TABLE campaigns DROP CONSTRAINT IF EXISTS campaigns_dates_order;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_dates_order
    CHECK (start_at IS NULL OR end_at IS NULL OR end_at > start_at);

-- 2. Completed. A statement that ends live enrollments (ready, calling, waiting -> a terminal
--    status) completes each active campaign of those rows that has no live enrollment left; a
--    statement that makes enrollments live (insert, or a terminal row made live again) makes
--    their completed campaign active. Paused and cancelled campaigns keep their state.
--
--    Two transactions that end a campaign's last two leads at once would each still see the
--    other's lead live (neither has committed): the check takes a per-campaign advisory lock
--    first, so the second waits for the first to commit and then sees both rows (each statement
--    of a PL/pgSQL function takes a new snapshot in READ COMMITTED). Apply takes the same lock
--    before the campaign's row (engine/store.cpp), so that a lead it enrolls is seen, or the
--    campaign it reopens is the completed one. The lock is taken only when few live rows are
--    left (at most 1,000 in the funnel's live count), so workers do not queue on it while a campaign runs. That
--    assumes fewer than 1,000 leads of one campaign end in transactions running at one time
--    (batch_size x worker_lanes x worker processes; 50 x 2 x 1 by default). Should more end at
--    once, a completion can be missed here: `serve` completes such campaigns at its next credits
--    read (schema/queries/campaigns/complete_idle.sql, every credits_poll_seconds).
CREATE OR REPLACE FUNCTION campaign_lifecycle_lock(campaign bigint) RETURNS void LANGUAGE sql AS $$
    SELECT pg_advisory_xact_lock(727100017, (campaign % 2147483647)::int)
$$;

CREATE OR REPLACE FUNCTION campaign_complete_if_idle(campaign bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM campaigns c WHERE c.campaign_id = campaign AND c.state = 'active') THEN
        RETURN false;
    END IF;
    -- The funnel's live count (migration 0008: a few shard rows, committed changes; this
    -- statement's are added after this trigger) rather than a walk of the live rows, which cost a
    -- heap visit per row on the worker's settle path.
    IF (SELECT COALESCE(sum(f.live), 0) FROM funnel_counts f WHERE f.campaign_id = campaign) > 1000 THEN
        RETURN false;
    END IF;
    PERFORM campaign_lifecycle_lock(campaign);
    IF EXISTS (SELECT 1 FROM enrollments e
               WHERE e.campaign_id = campaign AND e.status IN ('ready', 'calling', 'waiting')) THEN
        RETURN false;
    END IF;
    UPDATE campaigns c SET state = 'completed', pause_reason = NULL, updated_at = now()
    WHERE c.campaign_id = campaign AND c.state = 'active';
    RETURN FOUND;
END $$;

CREATE OR REPLACE FUNCTION campaign_reopen(campaign bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM campaign_lifecycle_lock(campaign);
    UPDATE campaigns c SET state = 'active', pause_reason = NULL, updated_at = now()
    WHERE c.campaign_id = campaign AND c.state = 'completed';
END $$;

CREATE OR REPLACE FUNCTION campaign_lifecycle_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cid bigint;
BEGIN
    -- Most statements of the worker (claims, settles that keep their leads live) end no lead and
    -- revive none: one pass over the new rows, no join.
    IF EXISTS (SELECT 1 FROM new_rows n WHERE n.status NOT IN ('ready', 'calling', 'waiting')) THEN
        -- campaigns whose rows went live -> finished, in one order (the advisory locks)
        FOR cid IN
            SELECT DISTINCT n.campaign_id
            FROM new_rows n JOIN old_rows o ON o.enrollment_id = n.enrollment_id
            WHERE o.status IN ('ready', 'calling', 'waiting') AND n.status NOT IN ('ready', 'calling', 'waiting')
            ORDER BY 1
        LOOP
            PERFORM campaign_complete_if_idle(cid);
        END LOOP;
    END IF;
    -- A finished lead made live again (an operator's lead operation): its completed campaign is
    -- active again. Rare: only statements that touch finished rows look.
    IF EXISTS (SELECT 1 FROM old_rows o WHERE o.status NOT IN ('ready', 'calling', 'waiting')) THEN
        FOR cid IN
            SELECT DISTINCT n.campaign_id
            FROM new_rows n JOIN old_rows o ON o.enrollment_id = n.enrollment_id
            JOIN campaigns c ON c.campaign_id = n.campaign_id
            WHERE o.status NOT IN ('ready', 'calling', 'waiting') AND n.status IN ('ready', 'calling', 'waiting')
              AND c.state = 'completed'
            ORDER BY 1
        LOOP
            PERFORM campaign_reopen(cid);
        END LOOP;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION campaign_lifecycle_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cid bigint;
BEGIN
    FOR cid IN
        SELECT DISTINCT n.campaign_id FROM new_rows n JOIN campaigns c ON c.campaign_id = n.campaign_id
        WHERE n.status IN ('ready', 'calling', 'waiting') AND c.state = 'completed'
        ORDER BY 1
    LOOP
        PERFORM campaign_reopen(cid);
    END LOOP;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS campaign_lifecycle_update ON enrollments;
CREATE TRIGGER campaign_lifecycle_update AFTER UPDATE ON enrollments
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION campaign_lifecycle_on_update();
DROP TRIGGER IF EXISTS campaign_lifecycle_insert ON enrollments;
CREATE TRIGGER campaign_lifecycle_insert AFTER INSERT ON enrollments
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION campaign_lifecycle_on_insert();

-- Active campaigns that already have nothing live are completed now.
UPDATE campaigns c SET state = 'completed', pause_reason = NULL, updated_at = now()
WHERE c.state = 'active'
  AND NOT EXISTS (SELECT 1 FROM enrollments e
                  WHERE e.campaign_id = c.campaign_id AND e.status IN ('ready', 'calling', 'waiting'));
