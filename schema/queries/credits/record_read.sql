-- record_read($1 balance, $2 credits per monitoring day): stores a balance read with the ledger's
-- posted total, the expected webhook monitoring it counts (the monitoring days recorded since the
-- previous read, at $2 each; migration 0009) and the drift since the previous read: how much more
-- the balance fell than the ledger posted plus that monitoring. Returns the drift and the
-- monitoring.
WITH id AS (
    SELECT nextval(pg_get_serial_sequence('api_credit_reads', 'read_id')) AS read_id
), counted AS (
    UPDATE monitoring_days m SET read_id = id.read_id FROM id WHERE m.read_id IS NULL RETURNING 1
), posted AS (
    SELECT COALESCE(sum(posted), 0) AS total FROM ledger_transfers WHERE state = 'posted'
), prev AS (
    SELECT balance, ledger_posted FROM api_credit_reads ORDER BY read_id DESC LIMIT 1
), monitoring AS (
    SELECT count(*) * $2::bigint AS credits FROM counted
)
INSERT INTO api_credit_reads (read_id, balance, ledger_posted, monitoring, drift)
SELECT id.read_id, $1, posted.total, monitoring.credits,
       COALESCE((SELECT (prev.balance - $1) - (posted.total - prev.ledger_posted) - monitoring.credits FROM prev), 0)
FROM id, posted, monitoring
RETURNING drift, monitoring;
