-- rate_limit_hits($1 campaign name): RATE_LIMITED answers per sender account and UTC day.
SELECT account_id, day::text, hits FROM report_rate_limit_hits WHERE campaign = $1 ORDER BY day, account_id;
