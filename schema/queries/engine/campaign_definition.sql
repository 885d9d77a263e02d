-- campaign_definition($1 campaign, $2 version): the canonical definition a worker runs, without
-- the audience's lead list (left as []). Campaign apply enrolled those leads; a worker reads each
-- lead from its enrollment and never from the definition, whose list made a campaign of 50,000
-- leads some 10 MB of JSON to read and parse per worker, at its first claim.
SELECT jsonb_set(definition, '{audience,leads}', '[]'::jsonb)::text
FROM campaign_versions WHERE campaign_id = $1 AND version = $2;
