-- find($1 name): the campaign, its state and current version, with that version's digest.
SELECT c.campaign_id, c.state::text, c.current_version, v.digest
FROM campaigns c JOIN campaign_versions v ON v.campaign_id = c.campaign_id AND v.version = c.current_version
WHERE c.name = $1
FOR UPDATE OF c;
