-- summary(): serve's balance reads: how many, the first and last, the last balance, the drift
-- summed over them, and the expected webhook monitoring they counted (migration 0009) (NULLs
-- when nothing was read yet).
SELECT count(*), to_char(min(read_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       to_char(max(read_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       (SELECT balance FROM api_credit_reads ORDER BY read_id DESC LIMIT 1),
       COALESCE(sum(drift), 0), COALESCE(sum(monitoring), 0)
FROM api_credit_reads
HAVING count(*) > 0;
