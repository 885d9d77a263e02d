-- funnel_counts: the funnel of every campaign, kept current as enrollments change, so that the
-- funnel report reads a handful of rows instead of scanning the campaign's enrollments (a scan of
-- 1,000,000 enrollments takes a quarter of a second or more; this takes well under a millisecond).
--
-- Statement-level triggers with transition tables add, per statement, the difference its rows
-- made: the rows after (+1) minus the rows before (-1), grouped by campaign and sender account.
-- Statements that change none of the counted facts (claims, leases, wake-ups) write nothing.
-- Each backend adds to its own shard of a (campaign, account) pair, so concurrent workers do not
-- queue on one counter row; readers sum the shards.
--
-- The counted facts are those of reports/funnel.sql (and report_enrollment_facts): a lead is
--   checked    when checked_at is set,           invited   when invited_at is set,
--   accepted   when accepted_at is set,
--   messaged   when messaged_at is set, or a send whose outcome was lost was answered after it,
--   replied    when its sequence ended on a reply or a reply came later,
--   failed     when its status is failed,        live      while ready, calling or waiting;
-- and credits is the sum of what its calls cost.
CREATE TABLE IF NOT EXISTS funnel_counts (
    campaign_id bigint   NOT NULL REFERENCES campaigns (campaign_id),
    account_id  text     NOT NULL,
    shard       smallint NOT NULL,
    enrolled    bigint   NOT NULL DEFAULT 0,
    checked     bigint   NOT NULL DEFAULT 0,
    invited     bigint   NOT NULL DEFAULT 0,
    accepted    bigint   NOT NULL DEFAULT 0,
    messaged    bigint   NOT NULL DEFAULT 0,
    replied     bigint   NOT NULL DEFAULT 0,
    failed      bigint   NOT NULL DEFAULT 0,
    live        bigint   NOT NULL DEFAULT 0,
    credits     bigint   NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign_id, account_id, shard)
);

-- One enrollment's signed contribution to each count (sign 1: it is counted; -1: it no longer
-- is). The one definition of the counted facts: the triggers and the recount view below use it.
DO $$ BEGIN
    CREATE TYPE funnel_fact AS (campaign_id bigint, account_id text, enrolled int, checked int, invited int,
                                accepted int, messaged int, replied int, failed int, live int, credits bigint);
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;

CREATE OR REPLACE FUNCTION funnel_fact_of(e enrollments, sign int) RETURNS funnel_fact
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT ROW(e.campaign_id, e.account_id, sign,
           sign * (e.checked_at IS NOT NULL)::int,
           sign * (e.invited_at IS NOT NULL)::int,
           sign * (e.accepted_at IS NOT NULL)::int,
           sign * (e.messaged_at IS NOT NULL
                   OR COALESCE(e.send_uncertain_at IS NOT NULL AND e.replied_at >= e.send_uncertain_at, false))::int,
           sign * (e.status = 'replied' OR e.replied_at IS NOT NULL)::int,
           sign * (e.status = 'failed')::int,
           sign * (e.status IN ('ready', 'calling', 'waiting'))::int,
           sign * e.credits)::funnel_fact
$$;

-- Adds the facts of one statement to the counts, summed per (campaign, account) first. Pairs
-- whose differences are all zero (a claim, a lease, a wake-up) take no lock and leave no dead
-- row. The pairs are locked in one order by every writer. (PL/pgSQL: its plan is cached per
-- session; a SQL function's would be planned again at every statement.)
CREATE OR REPLACE FUNCTION funnel_counts_add(facts funnel_fact[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
INSERT INTO funnel_counts AS f (campaign_id, account_id, shard, enrolled, checked, invited, accepted,
                                messaged, replied, failed, live, credits)
SELECT s.campaign_id, s.account_id, (pg_backend_pid() % 8)::smallint, s.enrolled, s.checked, s.invited,
       s.accepted, s.messaged, s.replied, s.failed, s.live, s.credits
FROM (SELECT campaign_id, account_id, sum(enrolled) AS enrolled, sum(checked) AS checked,
             sum(invited) AS invited, sum(accepted) AS accepted, sum(messaged) AS messaged,
             sum(replied) AS replied, sum(failed) AS failed, sum(live) AS live, sum(credits) AS credits
      FROM unnest(facts)
      GROUP BY campaign_id, account_id) s
WHERE (s.enrolled, s.checked, s.invited, s.accepted, s.messaged, s.replied, s.failed, s.live, s.credits)
      <> (0, 0, 0, 0, 0, 0, 0, 0, 0)
ORDER BY s.campaign_id, s.account_id
ON CONFLICT (campaign_id, account_id, shard) DO UPDATE
SET enrolled = f.enrolled + excluded.enrolled, checked = f.checked + excluded.checked,
    invited = f.invited + excluded.invited, accepted = f.accepted + excluded.accepted,
    messaged = f.messaged + excluded.messaged, replied = f.replied + excluded.replied,
    failed = f.failed + excluded.failed, live = f.live + excluded.live,
    credits = f.credits + excluded.credits;
END $$;

CREATE OR REPLACE FUNCTION funnel_counts_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM funnel_counts_add(ARRAY(SELECT funnel_fact_of(n, 1) FROM new_rows n));
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION funnel_counts_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM new_rows) THEN
        RETURN NULL;  -- a statement that matched no row (statement triggers fire anyway)
    END IF;
    PERFORM funnel_counts_add(ARRAY(SELECT funnel_fact_of(n, 1) FROM new_rows n
                                    UNION ALL
                                    SELECT funnel_fact_of(o, -1) FROM old_rows o));
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION funnel_counts_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM funnel_counts_add(ARRAY(SELECT funnel_fact_of(o, -1) FROM old_rows o));
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS funnel_counts_insert ON enrollments;
CREATE TRIGGER funnel_counts_insert AFTER INSERT ON enrollments
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION funnel_counts_on_insert();
DROP TRIGGER IF EXISTS funnel_counts_update ON enrollments;
CREATE TRIGGER funnel_counts_update AFTER UPDATE ON enrollments
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION funnel_counts_on_update();
DROP TRIGGER IF EXISTS funnel_counts_delete ON enrollments;
CREATE TRIGGER funnel_counts_delete AFTER DELETE ON enrollments
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION funnel_counts_on_delete();

-- The counts recomputed from the enrollments themselves (a full scan: for checks, not reports).
CREATE OR REPLACE VIEW funnel_recount AS
SELECT (x).campaign_id, (x).account_id, count(*) AS enrolled, sum((x).checked) AS checked,
       sum((x).invited) AS invited, sum((x).accepted) AS accepted, sum((x).messaged) AS messaged,
       sum((x).replied) AS replied, sum((x).failed) AS failed, sum((x).live) AS live,
       sum((x).credits) AS credits
FROM (SELECT funnel_fact_of(e, 1) AS x FROM enrollments e) r
GROUP BY 1, 2;

-- The enrollments already there, counted once (this migration runs in one transaction; the
-- triggers above count every later change).
LOCK TABLE enrollments IN SHARE MODE;
DELETE FROM funnel_counts;
INSERT INTO funnel_counts (campaign_id, account_id, shard, enrolled, checked, invited, accepted, messaged,
                           replied, failed, live, credits)
SELECT campaign_id, account_id, 0, enrolled, checked, invited, accepted, messaged, replied, failed, live, credits
FROM funnel_recount;
