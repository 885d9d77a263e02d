SELECT account_id, platform, api_status, connected, display_name, COALESCE(webhook_id, ''),
       to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), last_event, COALESCE(label, ''),
       COALESCE(quotas::text, ''), COALESCE(time_zone, '')
FROM accounts ORDER BY account_id;
