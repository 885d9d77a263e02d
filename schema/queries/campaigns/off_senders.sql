-- off_senders($1 campaign id, $2 its senders as a JSON array of ids): the campaign's live leads
-- on an account the new version no longer lists, by account (its label when it has one, and
-- whether it is connected). A lead
-- keeps the sender it was given (its invitation and its conversation are that account's): the
-- apply says so, and how to move those not contacted yet.
SELECT e.account_id, COALESCE(a.label, ''), count(*), COALESCE(a.connected, false)
FROM enrollments e
LEFT JOIN accounts a ON a.account_id = e.account_id
WHERE e.campaign_id = $1 AND e.status IN ('ready', 'calling', 'waiting')
  AND e.account_id NOT IN (SELECT jsonb_array_elements_text($2::jsonb))
GROUP BY 1, 2, 4
ORDER BY 3 DESC, 1
