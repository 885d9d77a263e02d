-- list($1 cursor: entry id to start after, $2 limit): entries in the order they were added.
SELECT entry_id, CASE WHEN company IS NULL THEN 'profile' ELSE 'company' END,
       COALESCE(profile_url, ''), COALESCE(canonical_url, ''), COALESCE(company, ''), reason, added_by,
       to_char(added_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
FROM do_not_contact
WHERE entry_id > $1
ORDER BY entry_id
LIMIT $2;
