-- known($1 source id): whether an event of that source id is stored (serve asks before it pays
-- for a read that only a new event needs).
SELECT EXISTS (SELECT 1 FROM events WHERE source_id = $1);
