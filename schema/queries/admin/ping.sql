-- ping(): readiness probe of the database connection.
SELECT 1;
