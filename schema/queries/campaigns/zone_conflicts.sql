-- zone_conflicts($1 the campaign's time zone, $2 its senders as a JSON array of ids): the senders
-- whose quota day (accounts.time_zone, migration 0032) is in another time zone than the
-- campaign's schedule, with that zone and the account's label ('' for none). Their day quotas
-- start and end at their own midnight, which falls inside or outside this campaign's working hours.
SELECT account_id, time_zone, COALESCE(label, '')
FROM accounts
WHERE account_id IN (SELECT jsonb_array_elements_text($2::jsonb))
  AND time_zone IS NOT NULL AND time_zone <> $1
ORDER BY 1
