-- lifecycle_lock($1 name): apply takes the campaign's lifecycle lock (migration 0017) before its
-- row, in the order the completion trigger takes them: a worker that ends the campaign's last
-- lead meanwhile either completes it before this apply enrolls (which then reopens it) or sees
-- the leads it enrolls. No row for a new campaign (nobody can complete it yet).
SELECT campaign_lifecycle_lock(campaign_id) FROM campaigns WHERE name = $1;
