-- 000_pre: extensions, roles and schemas. Safe to re-run.
-- The connecting role is the pipeline owner: it owns raw, catalog, work_* and release_*.
-- `analyst` reads release schemas and the catalog, nothing else (grants in 998_post.sql).

CREATE EXTENSION IF NOT EXISTS postgis;

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'analyst') THEN
        -- LOGIN without a password: the embedded cluster trusts its local socket only.
        -- On a shared server, give it a password: ALTER ROLE analyst PASSWORD '...'.
        CREATE ROLE analyst LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE;
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
