-- daily_activity($1 campaign name): invited, accepted, messaged, replied per UTC day.
SELECT day::text, invited, accepted, messaged, replied
FROM report_daily_activity WHERE campaign = $1 ORDER BY day;
