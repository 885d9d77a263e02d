-- definition($1 campaign id, $2 version): the version's canonical definition without its lead
-- list (as engine/campaign_definition), for a lead operation that needs the steps.
SELECT jsonb_set(definition, '{audience,leads}', '[]'::jsonb)::text
FROM campaign_versions WHERE campaign_id = $1 AND version = $2;
