-- delete($1 entry id): removes the entry. Leads it stopped stay stopped (cancelled is terminal).
DELETE FROM do_not_contact WHERE entry_id = $1 RETURNING entry_id;
