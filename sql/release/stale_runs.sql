-- Scratch schemas that a publish of a release may drop, with the work schema of the run
-- each belongs to: those of runs of this release, or of any already published release,
-- that failed or have been idle (no step ended) for longer than the grace period, and
-- those of this release unknown to private.release_runs (left by a version before it).
-- A run whose step is running holds a lock on its work schema; the caller skips it
-- (pg_try_advisory_xact_lock). A failed run of an unpublished release is kept for
-- inspection until that release is published.
-- Params: work_pattern, build_pattern (LIKE patterns of this release's scratch schemas),
-- work_schema, build_schema (this run's: not returned), release_name, grace_seconds.
SELECT n.nspname AS schema_name, coalesce(r.work_schema, n.nspname) AS run_work_schema
FROM pg_namespace AS n
LEFT JOIN private.release_runs AS r
       ON n.nspname IN (r.work_schema, r.build_schema)
WHERE (n.nspname LIKE 'work\_%%' OR n.nspname LIKE 'build\_%%')
  AND n.nspname NOT IN (%(work_schema)s, %(build_schema)s)
  AND CASE
        WHEN r.work_schema IS NULL
          THEN n.nspname LIKE %(work_pattern)s OR n.nspname LIKE %(build_pattern)s
        ELSE (r.release_name = %(release_name)s
              OR r.release_name IN (SELECT release_name FROM catalog.releases))
             AND (r.failed_at IS NOT NULL
                  OR r.last_step_at < clock_timestamp() - make_interval(secs => %(grace_seconds)s))
      END
ORDER BY 1;
