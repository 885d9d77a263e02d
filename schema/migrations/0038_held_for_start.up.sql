-- held_for_start(e, start_at): whether a live lead of a campaign not started yet runs at its
-- start_at rather than at its own next run: when that comes no later, or when an inbox event
-- waits for it (an acceptance, a reply), which the claim (engine/claim_due) applies no earlier
-- than start_at. One definition for the displays of a lead (admin/lead, admin/leads) and of a
-- campaign's waits (inbox/waiting_reasons).
CREATE OR REPLACE FUNCTION held_for_start(e enrollments, start_at timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$
SELECT e.status IN ('ready', 'waiting') AND start_at > now()
       AND (start_at >= e.next_run_at
            OR EXISTS (SELECT 1 FROM events ev WHERE ev.lead_id = e.lead_id AND ev.account_id = e.account_id
                       AND ev.event_id > e.event_cursor))
$$;
