-- insert($1 source id, $2 account, $3 kind, $4 profile canonical URL or '', $5 payload):
-- stores the event once (redeliveries and replays of the same source id change nothing) and
-- resolves its lead: by canonical URL, or, for an event that names its person only by public
-- identifier ($4 = '/in/<id>'), by the URL's last segment after '/in/' (the index of migration
-- 0027). Returns the new event's id and lead, nothing for a duplicate. Any event, new or not, is
-- a sign of life of the account's intake.
WITH seen AS (
    UPDATE accounts SET last_event_at = now() WHERE account_id = $2
)
INSERT INTO events (source_id, account_id, kind, lead_id, payload)
VALUES ($1, $2, $3,
        COALESCE((SELECT lead_id FROM leads WHERE canonical_url = NULLIF($4, '')),
                 (SELECT lead_id FROM leads
                  WHERE substring(canonical_url FROM '/in/([^/]+)$') = substring($4 FROM '^/in/([^/]+)$')
                  ORDER BY lead_id LIMIT 1)),
        $5::jsonb)
ON CONFLICT (source_id) DO NOTHING
RETURNING event_id, COALESCE(lead_id, 0);
