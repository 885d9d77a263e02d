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
