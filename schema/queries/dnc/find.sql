-- find($1 canonical url or NULL, $2 company or NULL): the entry equal to it.
SELECT entry_id FROM do_not_contact
WHERE ($1::text IS NOT NULL AND canonical_url = $1)
   OR ($2::text IS NOT NULL AND company IS NOT NULL AND lower(company) = lower($2))
LIMIT 1;
