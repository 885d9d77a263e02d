-- 0001 core: the durable state of the campaign engine.
-- Every state is enforced here too (enums, CHECK constraints), not only in C++: a bug in a
-- worker must not be able to write a state the state machine does not know.

CREATE TABLE IF NOT EXISTS accounts (
    account_id   text PRIMARY KEY,
    platform     text NOT NULL DEFAULT 'network',
    -- as the API reports it (OK, CREDENTIALS, ...); work pauses unless connected
    api_status   text NOT NULL DEFAULT 'OK',
    connected    boolean NOT NULL DEFAULT true,
    display_name text NOT NULL DEFAULT '',
    label        text UNIQUE,          -- operator's name for it; campaign files may use it
    webhook_id   text,                 -- the V2 webhook `serve` keeps for this account
    last_event   text NOT NULL DEFAULT '', -- hosted mode: the last event id taken (resume point)
    updated_at   timestamptz NOT NULL DEFAULT now()
);

DO $$ BEGIN
    CREATE TYPE campaign_state AS ENUM ('active', 'paused', 'cancelled', 'completed');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

CREATE TABLE IF NOT EXISTS campaigns (
    campaign_id     bigserial PRIMARY KEY,
    name            text NOT NULL UNIQUE,
    state           campaign_state NOT NULL DEFAULT 'active',
    pause_reason    text,
    current_version integer NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (state <> 'paused' OR pause_reason IS NOT NULL)
);

-- A new version per applied change; running enrollments keep the version they started with.
CREATE TABLE IF NOT EXISTS campaign_versions (
    campaign_id bigint NOT NULL REFERENCES campaigns ON DELETE CASCADE,
    version     integer NOT NULL CHECK (version >= 1),
    definition  jsonb NOT NULL,        -- canonical form (campaigns::to_json)
    source      text NOT NULL,         -- the file as applied
    digest      text NOT NULL,         -- of the canonical form: re-applying it is a no-op
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, version)
);

-- People, deduplicated across campaigns by canonical profile URL.
CREATE TABLE IF NOT EXISTS leads (
    lead_id       bigserial PRIMARY KEY,
    canonical_url text NOT NULL UNIQUE,
    profile_url   text NOT NULL,       -- as the source gave it, used in API calls
    fields        jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS do_not_contact (
    canonical_url text PRIMARY KEY,
    reason        text NOT NULL DEFAULT '',
    added_at      timestamptz NOT NULL DEFAULT now()
);

DO $$ BEGIN
    CREATE TYPE enrollment_status AS ENUM
        ('ready', 'calling', 'waiting', 'done', 'replied', 'failed', 'cancelled');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

-- One lead in one campaign. due_at is when a worker should look at it next: the state
-- machine's next_run_at, or earlier when an event for the lead arrives.
CREATE TABLE IF NOT EXISTS enrollments (
    enrollment_id    bigserial PRIMARY KEY,
    campaign_id      bigint NOT NULL REFERENCES campaigns,
    version          integer NOT NULL,
    lead_id          bigint NOT NULL REFERENCES leads,
    account_id       text NOT NULL REFERENCES accounts,
    step             text NOT NULL,
    status           enrollment_status NOT NULL DEFAULT 'ready',
    next_run_at      timestamptz NOT NULL DEFAULT now(),
    due_at           timestamptz NOT NULL DEFAULT now(),
    attempt          integer NOT NULL DEFAULT 0 CHECK (attempt >= 0),
    reconcile        boolean NOT NULL DEFAULT false,
    accepted_seen    boolean NOT NULL DEFAULT false,
    reason           text NOT NULL DEFAULT '',
    variant          text,
    event_cursor     bigint NOT NULL DEFAULT 0,   -- last inbox event applied
    lease_owner      text,
    lease_expires_at timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    FOREIGN KEY (campaign_id, version) REFERENCES campaign_versions (campaign_id, version),
    UNIQUE (campaign_id, lead_id),
    -- a lease is all or nothing
    CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL)),
    -- terminal states hold no lease, carry their finish time, and never reconcile
    CHECK (status NOT IN ('done', 'replied', 'failed', 'cancelled')
           OR (lease_owner IS NULL AND finished_at IS NOT NULL AND NOT reconcile)),
    CHECK (reconcile = false OR status = 'calling')
);

-- The claim query's index: only live enrollments, ordered by when they are due.
CREATE INDEX IF NOT EXISTS enrollments_due
    ON enrollments (due_at)
    WHERE status IN ('ready', 'calling', 'waiting');
CREATE INDEX IF NOT EXISTS enrollments_lead ON enrollments (lead_id, account_id);
CREATE INDEX IF NOT EXISTS enrollments_campaign_status ON enrollments (campaign_id, status);

-- A person is contacted by at most one campaign: the first enrollment of a lead owns it.
-- A second campaign that finds the lead records it here instead of enrolling it again.
CREATE TABLE IF NOT EXISTS skipped_leads (
    campaign_id bigint NOT NULL REFERENCES campaigns,
    lead_id     bigint NOT NULL REFERENCES leads,
    reason      text NOT NULL,
    PRIMARY KEY (campaign_id, lead_id)
);

DO $$ BEGIN
    CREATE TYPE attempt_outcome AS ENUM
        ('in_flight', 'ok', 'transient', 'permanent', 'uncertain', 'reconciled_present', 'reconciled_absent');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

-- The intent log: a row is written and committed before every API call of a step, and
-- completed with its outcome after. An in_flight row found after a crash is why a worker
-- reconciles before resending.
CREATE TABLE IF NOT EXISTS step_attempts (
    attempt_id    bigserial PRIMARY KEY,
    enrollment_id bigint NOT NULL REFERENCES enrollments,
    step          text NOT NULL,
    call          text NOT NULL CHECK (call IN
                  ('check_invitation', 'invite', 'withdraw', 'send', 'visit', 'get_conversation')),
    -- the call the attempt is about; reconcile = true: the request actually sent was the
    -- read-only check of whether an earlier `call` took effect (check_invitation, get_conversation)
    reconcile     boolean NOT NULL DEFAULT false,
    attempt       integer NOT NULL,
    variant       text,
    body          text NOT NULL DEFAULT '',
    outcome       attempt_outcome NOT NULL DEFAULT 'in_flight',
    error         text NOT NULL DEFAULT '',
    credits       integer NOT NULL DEFAULT 0 CHECK (credits >= 0),
    worker        text NOT NULL,
    started_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    CHECK ((outcome = 'in_flight') = (finished_at IS NULL))
);
CREATE INDEX IF NOT EXISTS step_attempts_enrollment ON step_attempts (enrollment_id);

-- The event inbox. Events are stored first, deduplicated by their source id, then wake the
-- enrollments of their lead on their account.
CREATE TABLE IF NOT EXISTS events (
    event_id    bigserial PRIMARY KEY,
    source_id   text NOT NULL UNIQUE,   -- API event id, or a digest of the body
    account_id  text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('accepted_invitation', 'message', 'disconnection', 'other')),
    lead_id     bigint REFERENCES leads,
    payload     jsonb NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS events_lead ON events (lead_id, account_id, event_id);
