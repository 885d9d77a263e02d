-- mirror: every entry as a worker's send-time check keeps it (engine/dnc.hpp, dnc::mirror): the
-- canonical URL of a person entry, the lower-cased name of a company entry.
SELECT canonical_url, lower(company) FROM do_not_contact
