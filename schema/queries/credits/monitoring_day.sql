-- monitoring_day($1 account id): records that `serve` keeps the account monitored today (UTC).
-- Idempotent: the API bills an account once per day.
INSERT INTO monitoring_days (account_id, day)
VALUES ($1, (now() AT TIME ZONE 'UTC')::date)
ON CONFLICT (account_id, day) DO NOTHING;
