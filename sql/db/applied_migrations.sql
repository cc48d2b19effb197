-- The schema files this database has applied, each with the sha256 of its text when it
-- was applied (an applied file never changes). Params: none.
SELECT version, sha256 FROM catalog.schema_migrations;
