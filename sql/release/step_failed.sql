-- A step of the run failed (its own transaction was rolled back; this is a separate one).
-- Params: work_schema.
UPDATE private.release_runs SET failed_at = clock_timestamp()
WHERE work_schema = %(work_schema)s;
