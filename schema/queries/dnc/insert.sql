-- insert($1 canonical url or NULL, $2 profile url as given or NULL, $3 company or NULL, $4 reason,
-- $5 added by): one entry; no row when an equal entry exists (same canonical URL, or the same
-- company ignoring case), which dnc/find then names.
INSERT INTO do_not_contact (canonical_url, profile_url, company, reason, added_by)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT DO NOTHING
RETURNING entry_id;
