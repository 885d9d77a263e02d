-- The acceptance rate counts the accepted among the invited, as the reply rate counts the replied
-- among the messaged. A lead's acceptance is set when a connection is seen (a check that finds
-- ACCEPTED, an invite refused because the person is a connection already), whether or not this
-- campaign invited the person: accepted / invited could pass 1 (133 % in a trial of an
-- invite-only campaign whose audience was partly connected already). The `accepted` columns keep
-- counting every connection seen.
CREATE OR REPLACE VIEW report_rates_by_campaign AS
SELECT campaign,
       count(*) AS enrollments,
       count(invited_at) AS invited, count(accepted_at) AS accepted,
       count(messaged_at) AS messaged, count(replied_at) AS replied,
       round(count(accepted_at) FILTER (WHERE invited_at IS NOT NULL)::numeric / NULLIF(count(invited_at), 0), 3)
           AS acceptance_rate,
       round(count(replied_at) FILTER (WHERE messaged_at IS NOT NULL)::numeric / NULLIF(count(messaged_at), 0), 3)
           AS reply_rate
FROM report_enrollment_facts GROUP BY campaign;

CREATE OR REPLACE VIEW report_rates_by_account AS
SELECT campaign, account_id,
       count(*) AS enrollments,
       count(invited_at) AS invited, count(accepted_at) AS accepted,
       count(messaged_at) AS messaged, count(replied_at) AS replied,
       round(count(accepted_at) FILTER (WHERE invited_at IS NOT NULL)::numeric / NULLIF(count(invited_at), 0), 3)
           AS acceptance_rate,
       round(count(replied_at) FILTER (WHERE messaged_at IS NOT NULL)::numeric / NULLIF(count(messaged_at), 0), 3)
           AS reply_rate
FROM report_enrollment_facts GROUP BY campaign, account_id;
