-- One run listed by expired_runs.sql, read again once the caller holds its lock
-- (try_lock_run.sql; this statement's snapshot is younger than the lock): a run that
-- started over since (prepare re-registers it) returns no row and keeps its schemas.
-- Returns one row per scratch schema of the run: schema_name, present (it exists, is
-- named work_* or build_*, and, for an orphan, still matches orphan_pattern, is owned by
-- this role and unknown to the ledger), bytes (pg_total_relation_size summed over its
-- tables), state (failed, idle or orphan) and last_activity (NULL for an orphan).
-- Dropping waits at most lock_timeout for a table in use (an operator inspecting it).
-- Params: work_schema, older_than_seconds, orphan (boolean), orphan_pattern.
SET LOCAL lock_timeout = '5s';
WITH run AS (
    SELECT unnest(ARRAY[r.work_schema, r.build_schema]) AS schema_name,
           CASE WHEN r.failed_at IS NULL THEN 'idle' ELSE 'failed' END AS state,
           greatest(r.last_step_at, r.failed_at) AS last_activity
    FROM private.release_runs AS r
    WHERE NOT %(orphan)s
      AND r.work_schema = %(work_schema)s
      AND greatest(r.last_step_at, r.failed_at)
          < clock_timestamp() - make_interval(secs => %(older_than_seconds)s)
    UNION ALL
    SELECT unnest(ARRAY[%(work_schema)s, 'build' || substr(%(work_schema)s, 5)]), 'orphan',
           NULL::timestamptz
    WHERE %(orphan)s
)
SELECT run.schema_name, n.oid IS NOT NULL AS present, run.state, run.last_activity,
       (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)
        FROM pg_class AS c
        WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'm'))::bigint AS bytes
FROM run
LEFT JOIN pg_namespace AS n
       ON n.nspname = run.schema_name
      AND (n.nspname LIKE 'work\_%%' OR n.nspname LIKE 'build\_%%')
      AND (NOT %(orphan)s
           OR (n.nspname ~ %(orphan_pattern)s
               AND pg_has_role(n.nspowner, 'USAGE')
               AND NOT EXISTS (SELECT FROM private.release_runs AS r
                               WHERE n.nspname IN (r.work_schema, r.build_schema))))
ORDER BY 1;
