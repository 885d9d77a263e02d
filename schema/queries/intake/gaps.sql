-- gaps(): the network accounts whose intake had a gap not yet covered by a sweep.
SELECT account_id, intake_gap_at FROM accounts
WHERE intake_gap_at IS NOT NULL AND platform = 'network' AND connected
ORDER BY account_id;
