-- The API key's credit balance as read from GET /v2/credits on a schedule by `serve`, next to
-- the ledger's posted total at the same moment. Between two reads the API balance should fall
-- by exactly what the ledger posted; the difference is the drift (positive: the API charged
-- more than the ledger recorded, e.g. audience searches at apply time, webhook monitoring, or a
-- call lost with its charge; negative: the ledger posted more, e.g. the whole reservation of an
-- uncertain call the API did not charge).
CREATE TABLE IF NOT EXISTS api_credit_reads (
    read_id       bigserial PRIMARY KEY,
    read_at       timestamptz NOT NULL DEFAULT now(),
    balance       bigint NOT NULL,
    ledger_posted bigint NOT NULL,
    drift         bigint NOT NULL DEFAULT 0   -- since the previous read
);
