-- in_flight($1 JSON array of canonical urls, $2 JSON array of lower-cased companies): how many
-- enrollments of matching leads (dnc_matching_leads, migration 0027) are `calling` (left to their
-- worker by dnc/cancel_matching).
SELECT count(*) FROM enrollments e
WHERE e.lead_id IN (SELECT m.lead_id FROM dnc_matching_leads($1::jsonb, $2::jsonb) AS m(lead_id)) AND e.status = 'calling';
