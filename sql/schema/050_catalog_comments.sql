-- 050_catalog_comments: what an analyst reads about the catalog in psql (\d+) or QGIS:
-- a comment on the schema, on every table and view of it and on every column. Only
-- comments: no data or structure changes. Safe to re-run.

COMMENT ON SCHEMA catalog IS
    'The registry of published releases (releases, latest) and of this database''s schema version (schema_migrations, owner only). Each release is a schema of its own named by releases.release_name.';

COMMENT ON TABLE catalog.releases IS
    'Published releases, one row each: the ledger of what each dataset has published. release_name is the schema that holds the release tables; a row exists exactly when that schema is published.';
COMMENT ON COLUMN catalog.releases.release_name IS
    'The schema that holds the release (its manifest, metrics and data tables).';
COMMENT ON COLUMN catalog.releases.dataset IS 'The dataset the release was made from.';
COMMENT ON COLUMN catalog.releases.method IS
    'The anonymization method (see the method reference of the documentation).';
COMMENT ON COLUMN catalog.releases.k IS
    'Anonymity threshold: every published item is supported by at least k distinct persons.';
COMMENT ON COLUMN catalog.releases.k_counts IS
    'What k counts: distinct persons (every release of this version).';
COMMENT ON COLUMN catalog.releases.privacy_model IS
    'The privacy model the independent verifier proved on the release before it was published.';
COMMENT ON COLUMN catalog.releases.window_start IS
    'Start of the release''s time window (inclusive).';
COMMENT ON COLUMN catalog.releases.window_end IS 'End of the release''s time window (exclusive).';
COMMENT ON COLUMN catalog.releases.parameters IS
    'The method''s parameters as given, defaults filled in (as the manifest of the release).';
COMMENT ON COLUMN catalog.releases.trajectories_out IS
    'Published units of the release''s main table (trajectories, objects, groups or counts: the manifest''s published_unit says which); exact.';
COMMENT ON COLUMN catalog.releases.published_at IS 'When the release was published.';
COMMENT ON COLUMN catalog.releases.code_version IS
    'Version of the anonymizers package that built the release.';

COMMENT ON COLUMN catalog.latest.release_name IS
    'The schema that holds the newest release of this dataset and method.';
COMMENT ON COLUMN catalog.latest.dataset IS 'The dataset (as catalog.releases.dataset).';
COMMENT ON COLUMN catalog.latest.method IS 'The method (as catalog.releases.method).';
COMMENT ON COLUMN catalog.latest.k IS 'Anonymity threshold (as catalog.releases.k).';
COMMENT ON COLUMN catalog.latest.k_counts IS 'What k counts (as catalog.releases.k_counts).';
COMMENT ON COLUMN catalog.latest.privacy_model IS
    'The privacy model proved (as catalog.releases.privacy_model).';
COMMENT ON COLUMN catalog.latest.window_start IS
    'Start of the time window, inclusive (as catalog.releases.window_start).';
COMMENT ON COLUMN catalog.latest.window_end IS
    'End of the time window, exclusive (as catalog.releases.window_end).';
COMMENT ON COLUMN catalog.latest.parameters IS
    'The method''s parameters (as catalog.releases.parameters).';
COMMENT ON COLUMN catalog.latest.trajectories_in IS
    'Trajectories in the window, interval-filtered (as catalog.releases.trajectories_in).';
COMMENT ON COLUMN catalog.latest.trajectories_out IS
    'Published units (as catalog.releases.trajectories_out).';
COMMENT ON COLUMN catalog.latest.published_at IS 'When the release was published.';
COMMENT ON COLUMN catalog.latest.code_version IS
    'Version of the anonymizers package that built the release.';
COMMENT ON COLUMN catalog.latest.composition_risk IS
    'NULL, or the operator''s reason for accepting a composition risk (as catalog.releases.composition_risk).';
COMMENT ON COLUMN catalog.latest.comparison IS
    'Always NULL here: comparison releases are not in this view.';
COMMENT ON COLUMN catalog.latest.source_fingerprint IS
    'Keyed fingerprint of the source file (as catalog.releases.source_fingerprint).';
COMMENT ON COLUMN catalog.latest.precision_risk IS
    'NULL, or the operator''s reason for accepting a precision risk (as catalog.releases.precision_risk).';
COMMENT ON COLUMN catalog.latest.attack_risk IS
    'NULL, or the operator''s reason for accepting an attack risk (as catalog.releases.attack_risk).';

COMMENT ON COLUMN catalog.schema_migrations.version IS
    'The sql/schema file applied (its name without .sql).';
COMMENT ON COLUMN catalog.schema_migrations.sha256 IS
    'SHA-256 of the file''s text when it was applied: an applied file never changes.';
COMMENT ON COLUMN catalog.schema_migrations.applied_at IS 'When the file was applied.';
