-- One migrator at a time: a transaction-level advisory lock (released at commit).
SELECT pg_advisory_xact_lock(727100001);
