-- rates_by_variant($1 campaign name): per message variant, messaged, replied and the reply rate.
SELECT variant, messaged, replied, COALESCE(reply_rate, 0)::float8
FROM report_rates_by_variant WHERE campaign = $1 ORDER BY variant;
