-- record_read($1 balance, $2 credits per monitoring day): stores a balance read with the ledger's
-- posted total, the expected webhook monitoring it counts (the monitoring days recorded since the
-- previous read, at $2 each; migration 0009), the credits reserved for calls in flight (migration
-- 0028; with the applies' audience searches not booked yet, 0042, and serve's billed reads, 0047) and the drift since the
-- previous read: how much more the balance fell than the ledger posted plus that monitoring.
-- Returns the drift, the monitoring, and the part of the drift the calls in flight do not
-- explain: the API may have charged calls in flight now that the ledger has not posted (up to
-- their reservations, a drift of up to +in_flight), and the ledger may since have posted calls
-- the API charged before the previous read (down to -its in_flight).
-- A balance higher than the previous read's was given credits (a top-up, a refund): calls only
-- take, so the read's drift is 0 (what came in cannot be told from what went out meanwhile), and
-- the credits added are returned as the rise plus what the ledger posted and the monitoring.
WITH id AS (
    SELECT nextval(pg_get_serial_sequence('api_credit_reads', 'read_id')) AS read_id
), counted AS (
    UPDATE monitoring_days m SET read_id = id.read_id FROM id WHERE m.read_id IS NULL RETURNING 1
), ledger AS (
    -- Every transfer posts into the spent account of its campaign's scope (ledger_check's 'spent'
    -- rule holds each equal to the sum of its campaign's posted transfers), so the posted total is
    -- one row per campaign, not a scan of every transfer ever made: a read costs the same after a
    -- year of running as on the first day. The reserved accounts hold what calls in flight may
    -- still cost.
    -- Audience searches of applies not booked yet (migration 0042) are in flight too, while the
    -- apply's session lives (migration 0043), and for an hour at most.
    SELECT COALESCE(sum(a.balance) FILTER (WHERE a.kind = 'spent'), 0) AS posted,
           COALESCE(sum(a.balance) FILTER (WHERE a.kind = 'reserved'), 0) +
               (SELECT COALESCE(sum(f.credits), 0) FROM searches_in_flight f
                WHERE f.started_at > now() - interval '1 hour'
                  AND EXISTS (SELECT 1 FROM pg_stat_activity p WHERE p.pid = f.backend_pid)) +
               (SELECT COALESCE(sum(r.credits), 0) FROM reads_in_flight r) AS in_flight
    FROM ledger_scopes s JOIN ledger_accounts a ON a.scope_id = s.scope_id AND a.kind IN ('spent', 'reserved')
    WHERE s.kind = 'campaign'
), prev AS (
    SELECT balance, ledger_posted, in_flight FROM api_credit_reads ORDER BY read_id DESC LIMIT 1
), monitoring AS (
    SELECT count(*) * $2::bigint AS credits FROM counted
), read AS (
    INSERT INTO api_credit_reads (read_id, balance, ledger_posted, monitoring, drift, in_flight)
    SELECT id.read_id, $1, ledger.posted, monitoring.credits,
           COALESCE((SELECT CASE WHEN prev.balance < $1 THEN 0
                                 ELSE (prev.balance - $1) - (ledger.posted - prev.ledger_posted) - monitoring.credits END
                     FROM prev), 0),
           ledger.in_flight
    FROM id, ledger, monitoring
    RETURNING drift, monitoring, in_flight, ledger_posted
)
SELECT read.drift, read.monitoring,
       read.drift - LEAST(GREATEST(read.drift, -COALESCE((SELECT in_flight FROM prev), 0)), read.in_flight),
       COALESCE((SELECT CASE WHEN prev.balance < $1
                             THEN ($1 - prev.balance) + (read.ledger_posted - prev.ledger_posted) + read.monitoring
                             ELSE 0 END
                 FROM prev), 0)
FROM read;
