-- 998_post: grants. analyst reads the catalog (and, per release, the release schema:
-- granted by the publish step); raw, work_* and build schemas stay private.

REVOKE ALL ON SCHEMA raw FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA raw FROM PUBLIC;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA catalog TO analyst;
GRANT SELECT ON catalog.releases, catalog.latest TO analyst;
REVOKE ALL ON catalog.schema_migrations FROM analyst;
