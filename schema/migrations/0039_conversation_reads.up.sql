-- 0039 the catch-up sweep's conversation reads: when the inbox's last message of a replied lead
-- is ours and later than their newest stored, the sweep reads the conversation (1 credit) for a
-- message of theirs that came before ours. Once read, the conversation has nothing more to give
-- until a newer message: the mark says up to which last message (the inbox's time of it) it was
-- read, so that a later gap's sweep does not pay for the same read again.
CREATE TABLE IF NOT EXISTS conversation_reads (
    account_id   text NOT NULL,
    lead_id      bigint NOT NULL REFERENCES leads,
    read_through timestamptz NOT NULL,
    read_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, lead_id)
);
