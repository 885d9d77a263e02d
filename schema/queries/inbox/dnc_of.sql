-- dnc_of($1 lead): the do-not-contact entry naming the lead's profile or company, if any.
SELECT d.entry_id FROM leads l
JOIN do_not_contact d ON d.canonical_url = l.canonical_url
    OR (d.company IS NOT NULL AND lower(d.company) = lower(btrim(COALESCE(l.fields->>'company', ''))))
WHERE l.lead_id = $1
LIMIT 1;
