-- A balance read taken while calls are in flight sees the API's charge for calls whose answers
-- the ledger has not posted yet, and the next read sees the ledger post what the API charged
-- before the last one: a drift of +N, then -N, that is no drift at all. Each read keeps the
-- credits reserved for calls in flight when it was taken (the campaigns' reserved accounts), and
-- credits/record_read says how much of a read's drift those do not explain: serve warns only
-- about that part.
ALTER TABLE api_credit_reads ADD COLUMN IF NOT EXISTS in_flight bigint NOT NULL DEFAULT 0;
