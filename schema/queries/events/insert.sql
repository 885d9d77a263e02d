-- insert($1 source id, $2 account, $3 kind, $4 profile canonical URL or '', $5 payload):
-- stores the event once (redeliveries and replays of the same source id change nothing) and
-- resolves its lead. Returns the new event's id and lead, nothing for a duplicate.
INSERT INTO events (source_id, account_id, kind, lead_id, payload)
VALUES ($1, $2, $3, (SELECT lead_id FROM leads WHERE canonical_url = NULLIF($4, '')), $5::jsonb)
ON CONFLICT (source_id) DO NOTHING
RETURNING event_id, COALESCE(lead_id, 0);
