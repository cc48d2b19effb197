-- 014_statistics_functions: the analyst cannot call functions that read the statistics or
-- the indexes of tables it may not read (DESIGN, privacy rule 6). Safe to re-run.
--
-- Why (issue 7, finding 2): PostGIS's _postgis_stats, _postgis_selectivity,
-- _postgis_join_selectivity, _postgis_index_extent and ST_EstimatedExtent (SECURITY
-- DEFINER) take a table by OID or name and read its pg_statistic rows or its spatial
-- index without asking for any privilege on it, and PostGIS grants them to PUBLIC.
-- Called cell by cell as analyst, _postgis_selectivity rebuilt a 2-D histogram of
-- raw.points (252 cells held by exactly one person) and of a run's work_* points while the
-- run went on. The pipeline calls none of them (the planner's estimates do not go
-- through them); QGIS calls ST_EstimatedExtent only with "Use estimated table metadata"
-- ticked, and falls back to reading the layer without it.
--
-- The functions belong to whoever installed PostGIS, usually a superuser, so the pipeline
-- role revokes only what it may (it owns them, or is a superuser); sql/admin/bootstrap.sql
-- does it as a superuser (`anonymizers db up` on the embedded cluster). Either way this
-- file then checks, and stops the migration with an error naming the bootstrap file when
-- analyst can still execute one of them. pg_catalog's per-table counters
-- (pg_stat_get_*(oid): exact inserted/live/deleted row counts of any table) are revoked by
-- the bootstrap too; a managed server may not let anyone revoke those, so here they give a
-- warning, not an error (the row count they tell is also, approximately, in
-- pg_class.reltuples, which no one can hide: README, "Who can connect").
DO $$
DECLARE
    fn regprocedure;
    open_doors text;
    hint constant text := 'A superuser runs sql/admin/bootstrap.sql once in this database: '
        'psql -v owner=' || current_user || ' -d ' || current_database()
        || ' -f sql/admin/bootstrap.sql (README, "Using it": Database).';
    superuser constant boolean := (SELECT rolsuper FROM pg_roles WHERE rolname = current_user);
BEGIN
    FOR fn IN
        SELECT p.oid::regprocedure
        FROM pg_proc AS p
        JOIN pg_depend AS d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                           AND d.deptype = 'e'
        JOIN pg_extension AS e ON e.oid = d.refobjid AND e.extname = 'postgis'
        WHERE p.proname IN ('_postgis_stats', '_postgis_selectivity', '_postgis_join_selectivity',
                            '_postgis_index_extent', 'st_estimatedextent')
          AND pg_has_role(current_user, p.proowner, 'USAGE')
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
    END LOOP;
    IF superuser THEN
        FOR fn IN
            SELECT oid::regprocedure FROM pg_proc
            WHERE pronamespace = 'pg_catalog'::regnamespace
              AND (proname = 'pg_stat_have_stats'
                   OR (proname LIKE 'pg\_stat\_get\_%' AND pronargs = 1
                       AND proargtypes[0] = 'oid'::regtype))
        LOOP
            EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
        END LOOP;
    END IF;

    SELECT string_agg(p.oid::regprocedure::text, ', ' ORDER BY p.oid::regprocedure::text)
    INTO open_doors
    FROM pg_proc AS p
    WHERE p.proname IN ('_postgis_stats', '_postgis_selectivity', '_postgis_join_selectivity',
                        '_postgis_index_extent', 'st_estimatedextent')
      AND has_function_privilege('analyst', p.oid, 'EXECUTE');
    IF open_doors IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', HINT = hint,
            MESSAGE = format('analyst can still execute %s, which read the statistics of any '
                             'table (privacy rule 6), and role %s may not revoke them',
                             open_doors, current_user);
    END IF;
    SELECT string_agg(oid::regprocedure::text, ', ' ORDER BY oid::regprocedure::text)
    INTO open_doors
    FROM pg_proc
    WHERE pronamespace = 'pg_catalog'::regnamespace AND proname LIKE 'pg\_stat\_get\_%'
      AND pronargs = 1 AND proargtypes[0] = 'oid'::regtype
      AND has_function_privilege('analyst', oid, 'EXECUTE');
    IF open_doors IS NOT NULL THEN
        RAISE WARNING 'analyst can execute the per-table statistics counters %', open_doors
            USING HINT = hint;
    END IF;
END
$$;
