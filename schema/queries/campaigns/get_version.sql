-- get_version($1 campaign, $2 version): the canonical definition a worker runs.
SELECT definition::text FROM campaign_versions WHERE campaign_id = $1 AND version = $2;
