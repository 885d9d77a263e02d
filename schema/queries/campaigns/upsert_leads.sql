-- upsert_leads($1 JSON array of {canonical_url, profile_url, fields}): leads are shared across
-- campaigns by canonical URL; a known lead keeps its row and gains any new fields.
INSERT INTO leads (canonical_url, profile_url, fields)
SELECT x.canonical_url, x.profile_url, x.fields
FROM jsonb_to_recordset($1::jsonb) AS x(canonical_url text, profile_url text, fields jsonb)
ON CONFLICT (canonical_url) DO UPDATE SET fields = leads.fields || EXCLUDED.fields
RETURNING lead_id, canonical_url;
