-- leader_running($1 the leader's advisory lock key, engine/intake.hpp): whether a serve replica
-- leads now (holds the lock). A bigint advisory lock is listed with its high half in classid, its
-- low half in objid, and objsubid 1.
SELECT EXISTS (SELECT 1 FROM pg_locks
               WHERE locktype = 'advisory' AND granted AND objsubid = 1
                 AND ((classid::bigint << 32) | objid::bigint) = $1);
