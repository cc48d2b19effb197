-- anonymizers compare, after each method's release process has ended: end the database
-- backends it left. A killed client does not stop its query: PostgreSQL notices the closed
-- socket only when it next writes to it, so a killed method's query ran on (35 minutes
-- once). Every connection of that process carries the method run's application_name
-- (ANONYMIZERS_APPLICATION_NAME, and PGAPPNAME for any other libpq client in it); this
-- session is never one of them. pg_terminate_backend waits up to `wait_ms` for each backend
-- to exit, and is false when it did not (or was already gone: the caller asks again).
-- Returns how many of them may remain (remaining).
-- Params: application_name, wait_ms.
SELECT count(*) FILTER (WHERE NOT pg_terminate_backend(pid, %(wait_ms)s)) AS remaining
FROM pg_stat_activity
WHERE application_name = %(application_name)s
  AND pid <> pg_backend_pid();
