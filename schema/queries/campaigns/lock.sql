-- One apply at a time: enrolling checks other campaigns' enrollments of the same lead, which
-- two concurrent applies could both miss. Held until commit.
SELECT pg_advisory_xact_lock(727100002);
