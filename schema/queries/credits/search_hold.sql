-- search_hold($1 search id, $2 credits): what the search may have been billed so far. The row
-- keeps the most it was told: a page's hold before it is sent may exceed what it then cost, and
-- holds sent without waiting may arrive out of order. The session that writes it is the apply's
-- (migration 0043).
UPDATE searches_in_flight SET credits = GREATEST(credits, $2::bigint), backend_pid = pg_backend_pid()
WHERE search_id = $1;
