-- in_flight($1 JSON array of canonical urls, $2 JSON array of lower-cased companies): how many
-- enrollments of matching leads are `calling` (left to their worker by dnc/cancel_matching).
SELECT count(*) FROM enrollments e JOIN leads l USING (lead_id)
WHERE e.status = 'calling'
  AND (l.canonical_url IN (SELECT jsonb_array_elements_text($1::jsonb))
       OR lower(btrim(l.fields->>'company')) IN (SELECT jsonb_array_elements_text($2::jsonb)));
