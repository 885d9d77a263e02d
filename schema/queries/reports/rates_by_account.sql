-- rates_by_account($1 campaign name): per sender account, invited/accepted/messaged/replied and
-- the acceptance and reply rates (view report_rates_by_account, migration 0004).
SELECT account_id, enrollments, invited, accepted, messaged, replied,
       COALESCE(acceptance_rate, 0)::float8, COALESCE(reply_rate, 0)::float8
FROM report_rates_by_account WHERE campaign = $1 ORDER BY account_id;
