-- insert_version($1 campaign, $2 version, $3 canonical definition, $4 source text, $5 digest)
INSERT INTO campaign_versions (campaign_id, version, definition, source, digest)
VALUES ($1, $2, $3::jsonb, $4, $5);
