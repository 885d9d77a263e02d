UPDATE campaigns SET current_version = $2, updated_at = now() WHERE campaign_id = $1;
