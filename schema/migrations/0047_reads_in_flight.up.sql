-- 0047 the billed reads `serve` makes for campaigns (the catch-up sweep's checks, lists and
-- conversations; a message event's conversation read) were charged to their campaign only once
-- answered: a `serve` killed, or its database session cut, while one was out left a read the API
-- billed and the ledger never booked (a trial: 549 check_invitation credits charged, 539 booked).
-- Each such read now holds a row here from before it leaves, at the most it can cost, in the
-- session of the `serve` that makes it. Its answer's charge removes the row in the same
-- transaction (whoever removes it books the read, once); a row whose session is gone is booked at
-- its most by the next sweep of whichever `serve` leads (intake/reads_orphaned), as a lost
-- answer's read is. credits/record_read counts the rows as calls in flight.
CREATE TABLE IF NOT EXISTS reads_in_flight (
    read_id     bigserial PRIMARY KEY,
    campaign_id bigint NOT NULL,
    account_id  text NOT NULL,
    action      text NOT NULL,
    credits     bigint NOT NULL CHECK (credits >= 0),
    backend_pid integer NOT NULL DEFAULT pg_backend_pid(),
    started_at  timestamptz NOT NULL DEFAULT now()
);
