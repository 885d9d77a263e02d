-- set_dates($1 campaign id, $2 start_at or '', $3 end_at or ''): the applied version's dates
-- (ISO 8601 with a zone, as the canonical form writes them; '' for none).
UPDATE campaigns SET start_at = NULLIF($2, '')::timestamptz, end_at = NULLIF($3, '')::timestamptz, updated_at = now()
WHERE campaign_id = $1;
