-- campaign_id($1 name): the campaign's id (unique index on name).
SELECT campaign_id FROM campaigns WHERE name = $1;
