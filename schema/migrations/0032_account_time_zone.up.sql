-- An account's quota day (accounts.time_zone, an IANA name): the calendar day its day quotas and
-- its campaigns' day caps count in, whichever campaign calls through it. Each campaign counted
-- the account's day by its own time zone before, so an account shared by campaigns in two zones
-- could spend a day quota in each on one calendar day. NULL: not chosen yet; the first campaign
-- applied with the account as a sender sets its own zone (campaigns/adopt_time_zone.sql), and
-- `accounts limits --time-zone` sets it by hand. An account without one counts in UTC.

-- The accounts campaigns already use get the zone of their first live campaign (active or
-- paused, the lowest id), else of their first campaign of any state, as that campaign's apply
-- would have set it. The pass over enrollments runs before the ALTER below: the ALTER locks
-- accounts until the migration commits, and the claims join accounts.
CREATE TEMP TABLE account_first_zone ON COMMIT DROP AS
SELECT DISTINCT ON (f.account_id) f.account_id,
       COALESCE(v.definition -> 'schedule' ->> 'time_zone', 'UTC') AS zone
FROM (SELECT account_id, campaign_id FROM enrollments GROUP BY account_id, campaign_id) f
JOIN campaigns c ON c.campaign_id = f.campaign_id
JOIN campaign_versions v ON v.campaign_id = c.campaign_id AND v.version = c.current_version
ORDER BY f.account_id, (c.state IN ('active', 'paused')) DESC, c.campaign_id;

ALTER TABLE accounts ADD COLUMN IF NOT EXISTS time_zone text;

UPDATE accounts a
SET time_zone = z.zone
FROM account_first_zone z
WHERE a.account_id = z.account_id AND a.time_zone IS NULL;
