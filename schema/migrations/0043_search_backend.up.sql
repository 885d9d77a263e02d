-- A search's row of credits in flight (migration 0042) names the database session of the apply
-- that keeps it: the apply's own connection, which lives as long as the apply (the admin API's,
-- as long as `serve`). An apply killed outright (SIGKILL) cannot remove its row, and its session
-- ends with it: credits/record_read then no longer counts the row, and the pages it was billed
-- for, never booked, are the drift they are (before, the row counted for its whole hour). A
-- connection made again (the store reconnects) names itself at the search's next hold.
ALTER TABLE searches_in_flight ADD COLUMN IF NOT EXISTS backend_pid integer NOT NULL DEFAULT pg_backend_pid();
