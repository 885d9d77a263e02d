-- waiting_reasons($1 campaign name): why the campaign's live leads wait, most common first (the
-- time in "... until HH:MM" left out so that one reason is one line).
SELECT e.status::text, regexp_replace(e.reason, ' until [0-9:TZ+-]+$', ''), count(*)
FROM enrollments e JOIN campaigns c USING (campaign_id)
WHERE c.name = $1 AND e.status IN ('ready', 'calling', 'waiting')
GROUP BY 1, 2
ORDER BY 3 DESC, 1, 2
LIMIT 8;
