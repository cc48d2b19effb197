-- 022_release_runs: the runs of each release and when each last did something, so that the
-- cleanup after a publish drops what failed or abandoned runs left behind and never the
-- schemas of a run of the same release that is still going (issue 8: cleanup dropped
-- concurrent runs' work schemas). Private: schema names of work data are not the
-- analyst's business (privacy rule 6).
CREATE SCHEMA IF NOT EXISTS private;
REVOKE ALL ON SCHEMA private FROM PUBLIC;
CREATE TABLE IF NOT EXISTS private.release_runs (
    work_schema  text PRIMARY KEY,
    build_schema text NOT NULL,
    release_name text NOT NULL,
    started_at   timestamptz NOT NULL,
    last_step_at timestamptz NOT NULL,
    failed_at    timestamptz
);
CREATE INDEX IF NOT EXISTS release_runs_by_release ON private.release_runs (release_name);
REVOKE ALL ON private.release_runs FROM PUBLIC;
COMMENT ON TABLE private.release_runs IS
    'One row per run of a release: its scratch schemas, when it started, when its last step '
    'ended and whether a step failed. The cleanup after a publish drops the schemas of runs '
    'that failed or have been idle longer than a grace period, never those of a run whose '
    'step is running (it holds an advisory lock on its work schema).';
