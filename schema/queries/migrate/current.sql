-- The newest applied version, or 0; NULL-safe when the table does not exist yet.
SELECT COALESCE((SELECT max(version) FROM schema_migrations), 0)
WHERE to_regclass('schema_migrations') IS NOT NULL;
