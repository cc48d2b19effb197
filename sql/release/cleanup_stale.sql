-- Drop what an earlier failed or killed run of this release left behind (its build
-- schema; its work schema is recreated by prepare). Identifiers: build.
DROP SCHEMA IF EXISTS {build} CASCADE;
