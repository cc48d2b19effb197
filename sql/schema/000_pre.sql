-- 000_pre: extensions, roles and schemas. Safe to re-run.
-- The connecting role is the pipeline owner: it owns raw, catalog, work_* and release_*.
-- `analyst` reads release schemas and the catalog, nothing else (grants in 998_post.sql).
--
-- The owner need not be a superuser (on the embedded cluster it is not): PostGIS and the
-- role analyst then come from sql/admin/bootstrap.sql, which a superuser runs once
-- (`anonymizers db up` does, on the embedded cluster). A superuser owner (the docker
-- deployment's POSTGRES_USER) installs them here itself. A non-superuser owner without
-- them gets an error that names the bootstrap file (anonymizers.db.migrate shows it
-- without a traceback).
DO $$
DECLARE
    hint constant text := 'A superuser runs sql/admin/bootstrap.sql once in this database: '
        'psql -v owner=' || current_user || ' -d ' || current_database()
        || ' -f sql/admin/bootstrap.sql (README, "Using it": Database).';
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'postgis') THEN
        BEGIN
            CREATE EXTENSION postgis;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', HINT = hint,
                MESSAGE = format('PostGIS is not installed in database %s, and role %s may '
                                 'not install it', current_database(), current_user);
        END;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'analyst') THEN
        BEGIN
            -- LOGIN without a password: give it one (\password analyst) before handing it out.
            CREATE ROLE analyst LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', HINT = hint,
                MESSAGE = format('role analyst does not exist, and role %s may not create it',
                                 current_user);
        END;
    END IF;
END
$$;

CREATE SCHEMA IF NOT EXISTS raw;
CREATE SCHEMA IF NOT EXISTS catalog;

CREATE TABLE IF NOT EXISTS catalog.schema_migrations (
    version    text PRIMARY KEY,
    sha256     text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE catalog.schema_migrations IS
    'Which sql/schema files this database holds (the version of its contract).';
