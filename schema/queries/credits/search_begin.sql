-- search_begin(): an apply's audience search is about to be sent (migration 0042); its id.
INSERT INTO searches_in_flight DEFAULT VALUES RETURNING search_id;
