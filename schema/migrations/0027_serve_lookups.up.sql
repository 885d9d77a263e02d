-- Lookups on `serve`'s single database thread that read whole tables (found by a review, each
-- reproduced with EXPLAIN ANALYZE on some 300,000 rows):
--
-- 1. An event that names its person only by public identifier ('/in/<id>', an acceptance) found
--    its lead with `canonical_url LIKE '%' || '/in/<id>'`: every lead read (58 ms at 320,000
--    leads when none matches, which is every acceptance from someone who is not a lead).
--    events/insert now looks the identifier up here. (It also no longer reads `_` in an
--    identifier as LIKE's any-character.)
CREATE INDEX IF NOT EXISTS leads_public_id
    ON leads ((substring(canonical_url FROM '/in/([^/]+)$')));

-- 2. `/metrics` counted the stored events of a type the engine does not use by reading the whole
--    events table at every scrape; they are counted from an index of their own now.
CREATE INDEX IF NOT EXISTS events_other ON events (event_id) WHERE kind = 'other';

-- 3. The leads a do-not-contact add matches (dnc/cancel_matching, dnc/in_flight): by URL through
--    the unique index, and by company (no index: a scan) only when companies are given. An OR of
--    the two read every lead for each entry added (63 ms at 320,000 leads), and `serve` adds one
--    for each reply marked not interested.
CREATE OR REPLACE FUNCTION dnc_matching_leads(urls jsonb, companies jsonb) RETURNS SETOF bigint
LANGUAGE sql STABLE AS $$
    SELECT l.lead_id FROM leads l
    WHERE l.canonical_url = ANY(ARRAY(SELECT jsonb_array_elements_text(urls)))
    UNION
    SELECT l.lead_id FROM leads l
    WHERE jsonb_array_length(companies) > 0
      AND lower(btrim(l.fields->>'company')) = ANY(ARRAY(SELECT jsonb_array_elements_text(companies)))
$$;
