-- skipped_count($1 campaign id): leads of its audience another campaign (or the do-not-contact
-- list) already owns.
SELECT count(*) FROM skipped_leads WHERE campaign_id = $1;
