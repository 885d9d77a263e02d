-- version_definitions($1 campaign id, $2 version, $3 version): the canonical definitions of two
-- versions of a campaign (campaign diff); a version that does not exist is not returned.
SELECT version, definition::text FROM campaign_versions
WHERE campaign_id = $1 AND version IN ($2, $3);
