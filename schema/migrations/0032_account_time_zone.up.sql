-- An account's quota day (accounts.time_zone, an IANA name): the calendar day its day quotas and
-- its campaigns' day caps count in, whichever campaign calls through it. Each campaign counted
-- the account's day by its own time zone before, so an account shared by campaigns in two zones
-- could spend a day quota in each on one calendar day. NULL: not chosen yet; the first campaign
-- applied with the account as a sender sets its own zone (campaigns/adopt_time_zone.sql), and
-- `accounts limits --time-zone` sets it by hand. An account without one counts in UTC.
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS time_zone text;

-- The accounts campaigns already use: the zone of the first campaign that enrolled leads on them
-- (the lowest id), as an apply would have set it. One pass over enrollments, grouped by account.
UPDATE accounts a
SET time_zone = first.zone
FROM (
    SELECT f.account_id, COALESCE(v.definition -> 'schedule' ->> 'time_zone', 'UTC') AS zone
    FROM (SELECT account_id, min(campaign_id) AS campaign_id FROM enrollments GROUP BY account_id) f
    JOIN campaigns c ON c.campaign_id = f.campaign_id
    JOIN campaign_versions v ON v.campaign_id = c.campaign_id AND v.version = c.current_version
) first
WHERE a.account_id = first.account_id AND a.time_zone IS NULL;
