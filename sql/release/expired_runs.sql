-- The runs whose scratch schemas (work_*, build_*) the retention lets go, whatever their
-- release: every run of private.release_runs whose last step ended, or failed, longer ago
-- than older_than_seconds. With orphans, also the scratch schemas that no run of the
-- ledger knows (left by a version before it), named as a run names them and owned by this
-- role, as the run (work schema) each belongs to: PostgreSQL records no creation time of
-- a schema, so their age is unknown and the operator asks for them explicitly.
-- One query, cheap when nothing has expired: the start of every run calls it. A step of a
-- listed run may be running: the caller locks each run and reads it again
-- (try_lock_run.sql, claim_expired_run.sql) before dropping anything.
-- Params: older_than_seconds, orphans (boolean), orphan_pattern (regular expression of a
-- scratch schema's name). Returns work_schema, orphan (boolean).
SELECT r.work_schema, false AS orphan
FROM private.release_runs AS r
WHERE greatest(r.last_step_at, r.failed_at)
      < clock_timestamp() - make_interval(secs => %(older_than_seconds)s)
UNION
SELECT 'work' || substr(n.nspname, strpos(n.nspname, '_')), true
FROM pg_namespace AS n
WHERE %(orphans)s
  AND n.nspname ~ %(orphan_pattern)s
  AND pg_has_role(n.nspowner, 'USAGE')
  AND NOT EXISTS (SELECT FROM private.release_runs AS r
                  WHERE n.nspname IN (r.work_schema, r.build_schema))
ORDER BY 1;
