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
    -- Every transfer posts into the spent account of its campaign's scope (ledger_check's 'spent'
    -- rule holds each equal to the sum of its campaign's posted transfers), so the posted total is
    -- one row per campaign, not a scan of every transfer ever made: a read costs the same after a
    -- year of running as on the first day.
    SELECT COALESCE(sum(a.balance), 0) AS total
    FROM ledger_scopes s JOIN ledger_accounts a ON a.scope_id = s.scope_id AND a.kind = 'spent'
    WHERE s.kind = 'campaign'
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
