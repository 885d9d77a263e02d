-- end_at_passed($1 name): the campaign's end_at (ISO 8601, UTC) when it has passed; no row
-- otherwise. A resume of such a campaign is refused: the first claim of its rows pauses it again.
SELECT to_char(end_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
FROM campaigns WHERE name = $1 AND end_at <= now();
