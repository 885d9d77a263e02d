-- insert($1 source id, $2 account, $3 kind, $4 profile canonical URL or '', $5 payload, $6 content
-- key or ''): stores the event once (redeliveries and replays of the same source id, or of the same
-- content key, migration 0035, change nothing: ON CONFLICT without a target covers both) and
-- resolves its lead: by canonical URL, or, for an event that names its person only by public
-- identifier ($4 = '/in/<id>'), by the URL's last segment after '/in/' (the index of migration
-- 0027). Returns the new event's id and lead, nothing for a duplicate. Any event, new or not, is
-- a sign of life of the account's intake.
WITH seen AS (
    UPDATE accounts SET last_event_at = now() WHERE account_id = $2
)
INSERT INTO events (source_id, account_id, kind, lead_id, payload, content_key)
VALUES ($1, $2, $3,
        COALESCE((SELECT lead_id FROM leads WHERE canonical_url = NULLIF($4, '')),
                 (SELECT lead_id FROM leads
                  WHERE substring(canonical_url FROM '/in/([^/]+)$') = substring($4 FROM '^/in/([^/]+)$')
                  ORDER BY lead_id LIMIT 1)),
        $5::jsonb, NULLIF($6, ''))
ON CONFLICT DO NOTHING
RETURNING event_id, COALESCE(lead_id, 0);
