-- leader_running($1 the leader's advisory lock key, engine/intake.hpp): whether a serve replica
-- of this database leads now (holds the lock). pg_locks lists the locks of every database of the
-- cluster (an advisory lock is scoped to its database); a bigint advisory lock is listed with its
-- high half in classid, its low half in objid, and objsubid 1.
SELECT EXISTS (SELECT 1 FROM pg_locks
               WHERE locktype = 'advisory' AND granted AND objsubid = 1
                 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                 AND ((classid::bigint << 32) | objid::bigint) = $1);
