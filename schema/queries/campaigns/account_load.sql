-- account_load($1 JSON array of account ids): live enrollments per sender account, across all
-- campaigns (new leads go to the least loaded account; its quotas are shared by campaigns), and
-- whether it is connected (new leads go to a connected one while there is one).
SELECT a.value AS account_id,
       (SELECT count(*) FROM enrollments e
        WHERE e.account_id = a.value AND e.status IN ('ready', 'calling', 'waiting')) AS live,
       COALESCE((SELECT x.connected FROM accounts x WHERE x.account_id = a.value), false) AS connected
FROM jsonb_array_elements_text($1::jsonb) AS a;
