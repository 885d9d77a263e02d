-- funnel($1 campaign name): leads found (enrolled or skipped), then how many reached each stage.
-- Reads the campaign's funnel_counts (migration 0008: kept current by triggers on enrollments,
-- a few rows per sender account) instead of scanning its enrollments. The counted facts are the
-- enrollment milestones (migration 0005), which the settle of each call (intent log) and the
-- insert of each inbox event write: the numbers are what the API was asked and told, not what
-- the state machine assumed. See funnel_fact_of in 0008 for each stage's definition;
-- `SELECT * FROM funnel_recount` recomputes the same numbers from the enrollments.
WITH c AS (SELECT campaign_id FROM campaigns WHERE name = $1),
skipped AS (SELECT count(*) AS n FROM skipped_leads s JOIN c USING (campaign_id)),
f AS (SELECT COALESCE(sum(enrolled), 0)::bigint AS enrolled, COALESCE(sum(checked), 0)::bigint AS checked,
             COALESCE(sum(invited), 0)::bigint AS invited, COALESCE(sum(accepted), 0)::bigint AS accepted,
             COALESCE(sum(messaged), 0)::bigint AS messaged, COALESCE(sum(replied), 0)::bigint AS replied,
             COALESCE(sum(failed), 0)::bigint AS failed, COALESCE(sum(live), 0)::bigint AS live,
             COALESCE(sum(credits), 0)::bigint AS credits
      FROM funnel_counts WHERE campaign_id = (SELECT campaign_id FROM c))
SELECT f.enrolled + skipped.n AS found, skipped.n AS skipped, f.checked, f.invited, f.accepted, f.messaged,
       f.replied, f.failed, f.live, f.credits
FROM f, skipped;
