-- 0015 event intake with no single point of failure: what `serve` knows of each account's
-- webhook lives here, not in one process's memory, so restarts reuse the webhooks and any
-- number of replicas verify deliveries; events that pass verification but cannot be read are
-- kept raw in a quarantine instead of being dropped.
ALTER TABLE accounts
    -- 'custom' (deliveries POSTed to webhook_url) or 'hosted' (SSE stream and polling)
    ADD COLUMN IF NOT EXISTS webhook_mode   text,
    ADD COLUMN IF NOT EXISTS webhook_url    text,
    -- the signing secret, AES-256-GCM under ORCH_SECRET_KEY: nonce (12) | tag (16) | ciphertext
    ADD COLUMN IF NOT EXISTS webhook_secret bytea,
    -- hosted polling's resume point, in whichever form the server pages: its next_cursor, and the
    -- created_at of the last event taken (for servers that page by `since` only)
    ADD COLUMN IF NOT EXISTS poll_cursor    text NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS poll_since     text NOT NULL DEFAULT '',
    -- when an event of the account last reached the inbox (events health)
    ADD COLUMN IF NOT EXISTS last_event_at  timestamptz,
    -- when intake of the account last had a gap (serve down, webhook recreated, stream lost past
    -- its replay window): the catch-up sweep covers everything since
    ADD COLUMN IF NOT EXISTS intake_gap_at  timestamptz;

CREATE TABLE IF NOT EXISTS events_quarantine (
    quarantine_id bigserial PRIMARY KEY,
    source_id     text NOT NULL UNIQUE,   -- the event's own id, else a digest of the raw body
    account_id    text NOT NULL,
    channel       text NOT NULL CHECK (channel IN ('webhook', 'stream', 'poll')),
    reason        text NOT NULL,
    body          bytea NOT NULL,         -- exactly as received (it may not even be UTF-8)
    received_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS events_quarantine_received ON events_quarantine (received_at);
