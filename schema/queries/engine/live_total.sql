-- live_total: enrollments not finished in campaigns that are running (the demo's "all done").
-- From funnel_counts (migration 0008), whose `live` the triggers keep equal to the count of the
-- campaign's ready, calling and waiting enrollments: a few rows instead of a count over the
-- enrollments (about 0.3 s with 1,000,000 in the table; --exit-when-idle polls it every 50 ms).
SELECT COALESCE(sum(f.live), 0)::bigint
FROM funnel_counts f JOIN campaigns c ON c.campaign_id = f.campaign_id AND c.state = 'active';
