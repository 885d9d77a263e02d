-- time_to_accept($1 campaign name): the distribution of invitation-to-acceptance times.
SELECT accepted, under_1h, under_1d, under_3d, under_7d, over_7d,
       COALESCE(p50_seconds, 0)::float8, COALESCE(p90_seconds, 0)::float8
FROM report_time_to_accept WHERE campaign = $1;
