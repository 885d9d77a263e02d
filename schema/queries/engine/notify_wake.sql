-- notify_wake(): tells idle workers (LISTEN orch_wake) that enrollments may have become due now:
-- an inbox event woke a waiter, a campaign was applied or resumed, an account reconnected.
-- Delivered at commit, once per transaction however often it is sent; workers that miss it
-- (not listening yet, connection lost) still find the rows at their next idle poll.
SELECT pg_notify('orch_wake', '');
