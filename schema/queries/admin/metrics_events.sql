-- metrics_events($1 after event id, $2 limit): inbox events past the metrics watermark, in id
-- order (primary key range scan, at most $2 rows per scrape), with whether each is older than
-- 5 s. An id is drawn at insert and its transaction commits later, so a lower id may still be
-- invisible while a higher one is seen (an insert's transaction lasts milliseconds, more only
-- behind a lock): the caller stops at the first young event and counts each older one exactly
-- once per process.
SELECT event_id, kind, received_at < now() - interval '5 seconds'
FROM events
WHERE event_id > $1
ORDER BY event_id
LIMIT $2;
