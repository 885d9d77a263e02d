-- read_end($1 read id): the read is answered (or surely not billed): its row goes. A row is there
-- when no other serve booked it meanwhile, as orphaned: the caller books the read only then.
DELETE FROM reads_in_flight WHERE read_id = $1 RETURNING read_id;
