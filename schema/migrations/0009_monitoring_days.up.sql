-- 0009 webhook monitoring days. The API bills about 10 credits per account and UTC day while a
-- V2 webhook monitors the account (billed once per account and day however many webhooks it
-- has). No campaign's budget pays for it, so it used to show as drift between the ledger and
-- the key's balance. `serve` now records each (account, UTC day) it keeps an account monitored;
-- each credit read counts the days recorded since the previous read at the configured price
-- (`monitoring_credits_per_day`) as expected monitoring, and leaves it out of the drift.
CREATE TABLE IF NOT EXISTS monitoring_days (
    account_id text NOT NULL,
    day        date NOT NULL,
    read_id    bigint,               -- the credit read that counted it; NULL: none yet
    PRIMARY KEY (account_id, day)
);
CREATE INDEX IF NOT EXISTS monitoring_days_uncounted ON monitoring_days (day) WHERE read_id IS NULL;

-- expected monitoring charges counted by this read (monitoring days new since the previous one)
ALTER TABLE api_credit_reads ADD COLUMN IF NOT EXISTS monitoring bigint NOT NULL DEFAULT 0;
