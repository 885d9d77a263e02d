-- gap($1 account or '' for all): intake may have missed events of these accounts from now on
-- (serve started after being down, a stream was lost): the next sweep covers them.
UPDATE accounts SET intake_gap_at = COALESCE(intake_gap_at, now())
WHERE ($1 = '' OR account_id = $1) AND platform = 'network';
