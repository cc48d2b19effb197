-- A run (re)starts: its row in private.release_runs, fresh. Params: work_schema,
-- build_schema, release_name.
INSERT INTO private.release_runs (work_schema, build_schema, release_name, started_at,
                                  last_step_at, failed_at)
VALUES (%(work_schema)s, %(build_schema)s, %(release_name)s, clock_timestamp(),
        clock_timestamp(), NULL)
ON CONFLICT (work_schema) DO UPDATE
SET started_at = EXCLUDED.started_at, last_step_at = EXCLUDED.last_step_at, failed_at = NULL;
