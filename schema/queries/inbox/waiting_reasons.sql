-- waiting_reasons($1 campaign name): why the campaign's live leads wait, most common first (the
-- time in "... until HH:MM" left out so that one reason is one line). In the order of
-- engine/lead_ops waiting_sentence, so that `campaign watch` and `leads list` say the same: a
-- paused (or otherwise not active) campaign first, then a disconnected sender, which outrank the
-- stored reason, which is the last wait the gate or the machine gave. A calling lead is said by
-- its call's kind (engine/lead_ops call_kind), after what holds the campaign or its sender if
-- anything does; a call in flight has no wait of its own ('': the watch says where it is), nor
-- has a ready lead that is due; a ready lead not yet due with no stored reason is in its step's
-- delay or outside its schedule: 'waiting in step X', as waiting_sentence says it. A lead held for
-- its campaign's start_at (migration 0038) waits for it, said with it.
SELECT e.status::text,
       CASE WHEN e.status = 'calling' AND o.held <> '' AND k.kind <> '' THEN o.held || '; ' || k.kind
            WHEN e.status = 'calling' AND o.held <> '' THEN o.held || '; calling the API'
            WHEN o.held <> '' THEN o.held
            WHEN e.status = 'calling' THEN k.kind
            WHEN held_for_start(e, c.start_at)
                THEN 'waiting for the campaign to start (start_at ' ||
                     to_char(c.start_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC)'
            WHEN e.status = 'ready' AND e.next_run_at <= now() THEN ''
            WHEN e.reason <> '' THEN regexp_replace(e.reason, ' until [0-9:TZ+-]+$', '')
            WHEN e.status = 'ready' THEN 'waiting in step ' || e.step
            ELSE '' END,
       count(*)
FROM enrollments e JOIN campaigns c USING (campaign_id)
LEFT JOIN accounts a ON a.account_id = e.account_id
-- what holds every lead of the campaign or the sender
CROSS JOIN LATERAL (
    SELECT CASE WHEN c.state = 'paused' AND COALESCE(c.pause_reason, '') = '' THEN 'paused by an operator'
                WHEN c.state = 'paused' AND c.pause_reason LIKE 'paused%' THEN c.pause_reason
                WHEN c.state = 'paused' THEN 'paused: ' || c.pause_reason
                WHEN c.state <> 'active' THEN 'campaign ' || c.state
                WHEN a.connected IS FALSE THEN 'waiting for account ' || e.account_id || ' to be connected again'
                ELSE '' END AS held,
           CASE WHEN c.state = 'paused' THEN ' when the campaign resumes'
                WHEN c.state = 'active' AND a.connected IS FALSE THEN ' once it is'
                ELSE '' END AS resumes) o
-- a calling lead's kind of call; '' for a call in flight (with nothing holding it)
CROSS JOIN LATERAL (
    SELECT CASE WHEN e.status <> 'calling' THEN ''
                WHEN e.lease_expires_at > now() AND e.reconcile THEN 'checking whether an uncertain call took effect'
                WHEN e.lease_expires_at > now() THEN ''
                WHEN COALESCE(e.lease_owner, '') <> '' AND o.held <> ''
                    THEN 'a worker''s lease ended before the call''s outcome was written: whether it took effect is '
                         'checked' || o.resumes
                WHEN COALESCE(e.lease_owner, '') <> ''
                    THEN 'due now: a worker''s lease ended before the call''s outcome was written'
                WHEN e.reconcile AND o.held <> '' THEN 'an uncertain call waits to be checked' || o.resumes
                WHEN e.reconcile AND e.next_run_at > now() THEN 'waiting to check whether an uncertain call took effect'
                WHEN e.reconcile THEN 'due now: to check whether an uncertain call took effect'
                ELSE '' END AS kind) k
WHERE c.name = $1 AND e.status IN ('ready', 'calling', 'waiting')
GROUP BY 1, 2
ORDER BY 3 DESC, 1, 2
LIMIT 8;
