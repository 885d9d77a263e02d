-- campaign_definition($1 campaign, $2 version): the canonical definition a worker runs, without
-- the audience's lead list (left as []). Campaign apply enrolled those leads; a worker reads each
-- lead from its enrollment and never from the definition, whose list every worker read and parsed
-- at its first claim (megabytes of JSON for 50,000 leads; about 16 MB of memory for 20,000).
SELECT jsonb_set(definition, '{audience,leads}', '[]'::jsonb)::text
FROM campaign_versions WHERE campaign_id = $1 AND version = $2;
