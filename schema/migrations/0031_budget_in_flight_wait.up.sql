-- A new wait code, budget_in_flight: the ledger refused a call because the campaign's budget
-- left cannot cover it, while the campaign's calls in flight hold reservations that could give
-- the credits back when they settle (engine/ledger.cpp reserve). The lead tries again shortly
-- instead of the campaign being paused with credits unspent. The list is the old one and the new
-- code (keep it equal to campaigns::all_wait_codes; engine_rows_pg_test checks both ways).
ALTER TABLE enrollments DROP CONSTRAINT IF EXISTS enrollments_wait_code_known;
ALTER TABLE enrollments ADD CONSTRAINT enrollments_wait_code_known CHECK (wait_code IN (
    'schedule', 'key_rate', 'key_cooldown', 'account_cooldown', 'day_quota', 'week_quota', 'campaign_quota',
    'pacing', 'limits_unavailable', 'limits_error', 'throttled', 'campaign_budget', 'day_budget',
    'account_budget', 'no_budget', 'budget_in_flight')) NOT VALID;
-- NOT VALID: the new list holds the old one, so every stored row passes already; new and changed
-- rows are checked as before, and the table is not scanned under the constraint's lock.
