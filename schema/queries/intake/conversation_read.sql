-- conversation_read($1 account, $2 lead): up to which last message (the inbox's time of it, in
-- epoch milliseconds) the catch-up sweep last read the lead's conversation; no row when never.
SELECT (extract(epoch FROM read_through) * 1000)::bigint
FROM conversation_reads
WHERE account_id = $1 AND lead_id = $2;
