-- upsert($1 id, $2 platform, $3 api status, $4 connected, $5 display name)
INSERT INTO accounts (account_id, platform, api_status, connected, display_name)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (account_id) DO UPDATE
SET platform = EXCLUDED.platform, api_status = EXCLUDED.api_status, connected = EXCLUDED.connected,
    display_name = EXCLUDED.display_name, updated_at = now();
