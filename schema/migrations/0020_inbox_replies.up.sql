-- 0020 the replies inbox: an operator answers a reply (a message event) from the inbox, and may
-- mark it "not interested" (which puts the person on the do-not-contact list).
-- A manual reply is a durable intent, as a step is: the row is written (unique per idempotency
-- key, so a repeated request does not send twice) before `serve` makes the call; the call itself
-- is a step_attempts row (step 'manual_reply') so that its credit reservation and charge go
-- through the ledger like any step's, keyed by that attempt.
ALTER TABLE events ADD COLUMN IF NOT EXISTS inbox_mark text CHECK (inbox_mark IN ('not_interested'));
ALTER TABLE events ADD COLUMN IF NOT EXISTS marked_by text;
ALTER TABLE events ADD COLUMN IF NOT EXISTS marked_at timestamptz;
CREATE INDEX IF NOT EXISTS events_messages ON events (event_id) WHERE kind = 'message';

CREATE TABLE IF NOT EXISTS manual_replies (
    reply_id         bigserial PRIMARY KEY,
    -- the client's Idempotency-Key, else one derived from the event and the text
    idempotency_key  text NOT NULL UNIQUE,
    event_id         bigint NOT NULL REFERENCES events,
    enrollment_id    bigint NOT NULL REFERENCES enrollments,
    campaign_id      bigint NOT NULL REFERENCES campaigns,
    account_id       text NOT NULL REFERENCES accounts,
    lead_id          bigint NOT NULL REFERENCES leads,
    body             text NOT NULL CHECK (body <> ''),
    -- queued: waits for serve's sender (not_before: a quota, cooldown or day budget);
    -- in_flight: the call may be under way (a lease: an expired one means the sender stopped);
    -- reconcile: the call's outcome is unknown: the conversation is read before any resend;
    -- sent, failed, refused: final.
    state            text NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'in_flight', 'reconcile', 'sent', 'failed', 'refused')),
    reason           text NOT NULL DEFAULT '',
    not_before       timestamptz NOT NULL DEFAULT now(),
    attempt_id       bigint REFERENCES step_attempts,   -- the last call's intent
    tries            integer NOT NULL DEFAULT 0 CHECK (tries >= 0),
    credits          integer NOT NULL DEFAULT 0 CHECK (credits >= 0),
    lease_owner      text,
    lease_expires_at timestamptz,
    requested_by     text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    sent_at          timestamptz,
    finished_at      timestamptz,
    CHECK ((state = 'in_flight') = (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
    CHECK ((state IN ('sent', 'failed', 'refused')) = (finished_at IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS manual_replies_due ON manual_replies (not_before)
    WHERE state IN ('queued', 'in_flight', 'reconcile');
CREATE INDEX IF NOT EXISTS manual_replies_event ON manual_replies (event_id);
