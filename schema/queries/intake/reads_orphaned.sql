-- reads_orphaned: the reads whose serve's database session is gone (killed, or its connection
-- cut) while they were out, removed: the caller books each at its most, as a lost answer's read.
DELETE FROM reads_in_flight f
WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity p WHERE p.pid = f.backend_pid)
RETURNING campaign_id, account_id, action, credits;
