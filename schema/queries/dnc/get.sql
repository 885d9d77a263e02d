-- get($1 entry id): one entry, in dnc/list's columns.
SELECT entry_id, CASE WHEN company IS NULL THEN 'profile' ELSE 'company' END,
       COALESCE(profile_url, ''), COALESCE(canonical_url, ''), COALESCE(company, ''), reason, added_by,
       to_char(added_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
FROM do_not_contact WHERE entry_id = $1;
