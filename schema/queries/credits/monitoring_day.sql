-- monitoring_day($1 JSON array of account ids): records that `serve` keeps these accounts
-- monitored today (UTC). Idempotent: the API bills an account once per day.
INSERT INTO monitoring_days (account_id, day)
SELECT a, (now() AT TIME ZONE 'UTC')::date FROM jsonb_array_elements_text($1::jsonb) AS a
ON CONFLICT (account_id, day) DO NOTHING;
