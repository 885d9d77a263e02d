-- record_read($1 balance): stores a balance read with the ledger's posted total and the drift
-- since the previous read. Returns the drift.
WITH posted AS (
    SELECT COALESCE(sum(posted), 0) AS total FROM ledger_transfers WHERE state = 'posted'
), prev AS (
    SELECT balance, ledger_posted FROM api_credit_reads ORDER BY read_id DESC LIMIT 1
)
INSERT INTO api_credit_reads (balance, ledger_posted, drift)
SELECT $1, posted.total,
       COALESCE((SELECT (prev.balance - $1) - (posted.total - prev.ledger_posted) FROM prev), 0)
FROM posted
RETURNING drift;
