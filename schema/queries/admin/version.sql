-- version($1 campaign id, $2 version): one version's canonical definition and source text.
SELECT definition::text, source, digest, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
FROM campaign_versions WHERE campaign_id = $1 AND version = $2;
