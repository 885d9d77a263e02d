-- account_zones: each account's quota-day time zone ('' when none is chosen: UTC).
SELECT account_id, COALESCE(time_zone, '') FROM accounts
