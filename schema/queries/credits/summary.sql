-- summary(): serve's balance reads: how many, the first and last, the last balance, and the
-- drift summed over them (NULLs when nothing was read yet).
SELECT count(*), min(read_at)::text, max(read_at)::text,
       (SELECT balance FROM api_credit_reads ORDER BY read_id DESC LIMIT 1),
       COALESCE(sum(drift), 0)
FROM api_credit_reads
HAVING count(*) > 0;
