-- An apply's audience search is billed page by page, and the apply books what it cost in the
-- campaign's ledger only once it stores the campaign: a balance read that `serve` takes between
-- the two sees the API's charge with nothing posted, and warned of a drift that was none (a
-- trial saw it three times). Each search in flight holds what it may have been billed so far (the
-- pages answered, and the page being sent at most), and credits/record_read counts that with the
-- reserved credits of the workers' calls in flight. The apply removes its row once it has booked
-- the charge, or stored nothing. A row of an apply that died mid-search is no longer counted after
-- an hour: its pages were billed and never booked, which is a drift the reads should report.
CREATE TABLE IF NOT EXISTS searches_in_flight (
    search_id bigserial PRIMARY KEY,
    credits bigint NOT NULL DEFAULT 0 CHECK (credits >= 0),
    started_at timestamptz NOT NULL DEFAULT now()
);
