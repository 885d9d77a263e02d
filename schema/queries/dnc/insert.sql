-- insert($1 canonical url or NULL, $2 profile url as given or NULL, $3 company or NULL, $4 reason,
-- $5 added by): one entry; no row when an equal entry exists (same canonical URL, or the same
-- company ignoring case), which dnc/find then names. An entry there already is looked for first,
-- so that a duplicate takes no number of the ids' sequence (ids went 1, 2, 4 after one); the
-- conflict clause still holds for an equal entry added at the same moment.
INSERT INTO do_not_contact (canonical_url, profile_url, company, reason, added_by)
SELECT $1, $2, $3, $4, $5
WHERE NOT EXISTS (SELECT 1 FROM do_not_contact
                  WHERE ($1::text IS NOT NULL AND canonical_url = $1)
                     OR ($3::text IS NOT NULL AND company IS NOT NULL AND lower(company) = lower($3)))
ON CONFLICT DO NOTHING
RETURNING entry_id;
