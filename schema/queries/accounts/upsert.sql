-- upsert($1 id, $2 platform, $3 api status, $4 connected, $5 display name, $6 label or '')
-- A login or sync refreshes what the API says; the label stays unless a new one is given.
INSERT INTO accounts (account_id, platform, api_status, connected, display_name, label)
VALUES ($1, $2, $3, $4, $5, NULLIF($6, ''))
ON CONFLICT (account_id) DO UPDATE
SET platform = EXCLUDED.platform, api_status = EXCLUDED.api_status, connected = EXCLUDED.connected,
    display_name = EXCLUDED.display_name, label = COALESCE(EXCLUDED.label, accounts.label), updated_at = now();
