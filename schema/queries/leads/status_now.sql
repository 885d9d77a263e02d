-- status_now($1 enrollment ids, a bigint array literal): their status as committed now, read after
-- leads/lock passed them over (a worker's claim made them `calling`, or they finished, while the
-- operation ran): the refusal says what they are now, not what leads/match read before.
SELECT enrollment_id, status::text FROM enrollments WHERE enrollment_id = ANY($1::bigint[]);
