-- conversation_read_done($1 account, $2 lead, $3 the inbox's last message's time, epoch ms): the
-- sweep read the conversation through that message and stored what it held of theirs. A mark
-- never moves back (two replicas' sweeps may finish in either order).
INSERT INTO conversation_reads (account_id, lead_id, read_through)
VALUES ($1, $2, to_timestamp($3::bigint / 1000.0))
ON CONFLICT (account_id, lead_id) DO UPDATE
SET read_through = greatest(conversation_reads.read_through, excluded.read_through), read_at = now();
