-- mirror_exclusions: each campaign that may still call (active or paused) whose current version's
-- file has an `exclude:` section: its id and that section as written (profile URLs and companies;
-- dnc::mirror::load canonicalises them as campaign apply does).
SELECT c.campaign_id, v.definition->'exclude'
FROM campaigns c
JOIN campaign_versions v ON v.campaign_id = c.campaign_id AND v.version = c.current_version
WHERE c.state IN ('active', 'paused')
  AND v.definition ? 'exclude'  -- campaigns::to_json writes it only when it names someone
