-- account_load(): live and parked enrollments per sender account.
SELECT account_id,
       count(*) FILTER (WHERE status IN ('ready', 'calling', 'waiting')),
       count(*) FILTER (WHERE status IN ('ready', 'calling', 'waiting') AND due_at = 'infinity')
FROM enrollments GROUP BY account_id;
