-- A step of the run ended (inside its transaction: recorded if and only if it committed).
-- A step that succeeds after an earlier failure (a retry) makes the run live again: its
-- failure no longer lets another run's publish drop its schemas.
-- Params: work_schema.
UPDATE private.release_runs SET last_step_at = clock_timestamp(), failed_at = NULL
WHERE work_schema = %(work_schema)s;
