-- in_flight($1 JSON array of canonical urls, $2 JSON array of lower-cased companies): how many
-- enrollments of matching leads are `calling` (left to their worker by dnc/cancel_matching). The
-- leads found as dnc/cancel_matching finds them.
WITH m AS (
    SELECT l.lead_id FROM leads l
    WHERE l.canonical_url = ANY(ARRAY(SELECT jsonb_array_elements_text($1::jsonb)))
    UNION
    SELECT l.lead_id FROM leads l
    WHERE jsonb_array_length($2::jsonb) > 0
      AND lower(btrim(l.fields->>'company')) = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb)))
)
SELECT count(*) FROM enrollments e
WHERE e.lead_id IN (SELECT lead_id FROM m) AND e.status = 'calling';
