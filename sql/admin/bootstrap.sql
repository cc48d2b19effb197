-- bootstrap: what only a superuser may do for the pipeline, in the current database.
-- Safe to re-run. psql only (it reads the psql variable `owner`, default anonymizers).
--
-- The pipeline's own role (the owner of raw, catalog, work_* and release_*) is not a
-- superuser: it cannot install PostGIS, create roles or take privileges away from
-- functions it does not own. A superuser does those three things here, once per database:
--
--   * the roles: the owner (LOGIN CREATEDB, no SUPERUSER, no CREATEROLE; CREATEDB because
--     the tests clone databases from a template) and `analyst` (reads releases and the
--     catalog only: grants in sql/schema/998_post.sql and the publish step). The owner is
--     made a member of analyst, so that it can SET ROLE analyst, and of pg_signal_backend:
--     DROP DATABASE ... WITH (FORCE) (the tests drop their databases so) must end the
--     autovacuum worker that may be analysing a just-loaded table there, a process of no
--     role that only pg_signal_backend's members may end. It cannot end a superuser's.
--   * CREATE EXTENSION postgis: PostGIS is not a trusted extension (its C functions run
--     inside the server), so only a superuser may install it.
--   * the statistics side doors (DESIGN, privacy rule 6; issue 7, finding 2): PostGIS's
--     _postgis_stats, _postgis_selectivity, _postgis_join_selectivity,
--     _postgis_index_extent and ST_EstimatedExtent read pg_statistic or an index of any
--     table named by OID, without asking for a privilege on that table (ST_EstimatedExtent
--     is SECURITY DEFINER): called cell by cell they rebuild a 2-D histogram of raw.points.
--     pg_catalog's pg_stat_get_*(oid) return exact row counters (inserted, live, deleted)
--     of any table, function or database. All of them lose EXECUTE for PUBLIC; the owner
--     keeps the pg_stat_get_* ones (pg_stat_user_tables, for monitoring its own loads).
--
-- Where it runs:
--   * the embedded cluster: `anonymizers db up` runs it as the cluster's bootstrap
--     superuser `postgres` in template1 (so every database created later, the test
--     template and its clones included, inherits PostGIS and the revokes) and in the
--     database anonymizers.
--   * your own server (DATABASE_URL): a DBA runs it once, as a superuser, in the
--     pipeline's database, and creates that database owned by the pipeline role:
--       psql -v owner=anonymizers -d postgres -c 'CREATE DATABASE anonymizers OWNER anonymizers'
--       psql -v owner=anonymizers -d anonymizers -f sql/admin/bootstrap.sql
--     (and in template1 too, to run the test suite there, which creates databases).
--     Then the schema migrations run as the pipeline role; sql/schema/014 checks the
--     revokes and names this file when they are missing.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
\if :{?owner}
\else
\set owner anonymizers
\endif
SET anonymizers.owner = :'owner';  -- for the DO blocks, which see no psql variables

DO $$
DECLARE
    owner constant text := current_setting('anonymizers.owner');
BEGIN
    -- Demoting the role this very session runs as (or the cluster's bootstrap role, which
    -- owns the system catalogs) would leave the server without the superuser it needs.
    IF owner = session_user OR EXISTS (SELECT FROM pg_roles WHERE oid = 10 AND rolname = owner)
    THEN
        RAISE EXCEPTION 'the pipeline role % must not be the superuser running this file', owner
            USING HINT = 'Run sql/admin/bootstrap.sql as another superuser (e.g. postgres), '
                         'with -v owner=<the pipeline''s role>.';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = owner) THEN
        EXECUTE format('CREATE ROLE %I', owner);
    END IF;
    EXECUTE format('ALTER ROLE %I LOGIN CREATEDB NOSUPERUSER NOCREATEROLE NOREPLICATION '
                   'NOBYPASSRLS', owner);
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'analyst') THEN
        -- Its password is set by whoever hands it out: `anonymizers db up` generates one
        -- into a 0600 passfile; on your own server: \password analyst.
        CREATE ROLE analyst;
    END IF;
    ALTER ROLE analyst LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
    IF NOT pg_has_role(owner, 'analyst', 'MEMBER') THEN
        EXECUTE format('GRANT analyst TO %I', owner);
    END IF;
    IF NOT pg_has_role(owner, 'pg_signal_backend', 'MEMBER') THEN
        EXECUTE format('GRANT pg_signal_backend TO %I', owner);
    END IF;
END
$$;

CREATE EXTENSION IF NOT EXISTS postgis;

DO $$
DECLARE
    owner constant text := current_setting('anonymizers.owner');
    fn regprocedure;
BEGIN
    FOR fn IN
        SELECT p.oid::regprocedure
        FROM pg_proc AS p
        JOIN pg_depend AS d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                           AND d.deptype = 'e'
        JOIN pg_extension AS e ON e.oid = d.refobjid AND e.extname = 'postgis'
        WHERE p.proname IN ('_postgis_stats', '_postgis_selectivity', '_postgis_join_selectivity',
                            '_postgis_index_extent', 'st_estimatedextent')
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
    END LOOP;
    FOR fn IN
        SELECT oid::regprocedure FROM pg_proc
        WHERE pronamespace = 'pg_catalog'::regnamespace
          AND (proname = 'pg_stat_have_stats'
               OR (proname LIKE 'pg\_stat\_get\_%' AND pronargs = 1
                   AND proargtypes[0] = 'oid'::regtype))
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', fn, owner);
    END LOOP;
END
$$;
