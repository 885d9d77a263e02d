-- pause_ended(): campaigns whose end_at has passed stop (paused, pause code 'ended', as the
-- claim does at engine/claim_due), also while nothing of theirs comes due: their state and their
-- leads' reasons say so at once, not when a lead is next claimed (a trial: "active" 80 s after
-- end_at, and for a week behind a 7-day delay). A campaign the engine paused for the key's
-- credits or its budget ends too (a top-up or a raise must not resume it); an operator's pause
-- stays the operator's. Answers the ids and names of those it stopped (their rows are parked by
-- the caller, engine/park_campaign).
UPDATE campaigns c
SET state = 'paused', pause_code = 'ended', updated_at = now(),
    pause_reason = 'ended: end_at ' || to_char(c.end_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ' passed'
WHERE c.end_at <= now()
  AND (c.state = 'active' OR (c.state = 'paused' AND c.pause_code IN ('credits', 'budget')))
RETURNING c.campaign_id, c.name;
