-- claim_pick_slices($1 limit, $2 the lane's current slice, $3 slices to visit at most): engine/claim_pick
-- over the slices of the due work (migration 0019): the ids of up to $1 due rows no other
-- transaction holds, from the lane's slice on, and the slice its sweep goes on from. Run in
-- engine/claim_pick's savepoint, rolled back at once; engine/claim_due then locks the picked rows.
SELECT enrollment_id, next_slice FROM claim_pick_slices($1::integer, $2::integer, $3::integer);
