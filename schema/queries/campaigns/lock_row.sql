-- lock_row($1 name): waits for and takes the campaign's row lock (FOR NO KEY UPDATE, as
-- campaigns/find), joining nothing. campaigns/find runs after it, in a statement of its own:
-- a find that waited for a concurrent apply's lock itself re-checks the row the apply committed
-- (its new current_version) against campaign_versions as its own snapshot saw them, before the
-- new version's row, and finds no campaign at all. `budget set` answered 404 "no campaign named"
-- while an apply of that campaign committed.
SELECT campaign_id FROM campaigns WHERE name = $1 FOR NO KEY UPDATE;
