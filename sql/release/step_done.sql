-- A step of the run ended (inside its transaction: recorded if and only if it committed).
-- Params: work_schema.
UPDATE private.release_runs SET last_step_at = clock_timestamp()
WHERE work_schema = %(work_schema)s;
