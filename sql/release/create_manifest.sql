-- The release's manifest (one row: what was released, from what, how, and the proof)
-- and its metrics table (filled by the metrics step). Shared by every family.
-- Params: see ReleaseSpec.manifest_params, plus the family's exact counts
-- (trajectories_in, persons_in, points_in, published, suppressed; families/base.py
-- ManifestCounts) and published_unit. Counts of the input go through the interval filter
-- (catalog.interval_count, seed 004 §4.2): two releases of nested windows must not
-- difference into an exact count of one. trajectories_out is exact: it is the size of the
-- release's main table anyway. A cleared task runs it again: the tables are made afresh.
-- Every table of a release has a single-column integer key, fid (the feature id GIS tools
-- need: GDAL, QGIS), last so that a positional INSERT leaves it to its identity; names
-- stay ordinary (unique) attributes.
-- Identifiers: build.
DROP TABLE IF EXISTS {build}.metrics;
DROP TABLE IF EXISTS {build}.manifest;
CREATE TABLE {build}.manifest (
    release_name      text NOT NULL,
    dataset           text NOT NULL,
    method            text NOT NULL,
    parameters        jsonb NOT NULL,
    k                 integer NOT NULL,
    k_counts          text NOT NULL,
    privacy_model     text NOT NULL,
    window_start      timestamptz NOT NULL,
    window_end        timestamptz NOT NULL,
    srid              integer NOT NULL,
    input_fingerprint text NOT NULL,
    count_interval    integer NOT NULL,
    composition_risk  text,
    precision_risk    text,
    attack_risk       text,
    source_fingerprint text NOT NULL,
    trajectories_in   bigint,
    persons_in        bigint,
    points_in         bigint,
    trajectories_out  bigint NOT NULL,
    published_unit    text NOT NULL,
    suppressed        bigint,
    verifier_result   jsonb,
    code_version      text NOT NULL,
    fid               integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
INSERT INTO {build}.manifest
SELECT %(release_name)s, %(dataset)s, %(method)s, %(parameters)s, %(k)s, %(k_counts)s,
       %(privacy_model)s, %(window_start)s, %(window_end)s, %(srid)s, %(input_fingerprint)s,
       %(count_interval)s, %(composition_risk)s, %(precision_risk)s, %(attack_risk)s,
       %(source_fingerprint)s,
       catalog.interval_count(%(trajectories_in)s, %(k)s, %(count_interval)s),
       catalog.interval_count(%(persons_in)s, %(k)s, %(count_interval)s),
       catalog.interval_count(%(points_in)s, %(k)s, %(count_interval)s),
       %(published)s, %(published_unit)s,
       catalog.interval_count(%(suppressed)s, %(k)s, %(count_interval)s),
       NULL, %(code_version)s;

CREATE TABLE {build}.metrics (
    name        text NOT NULL UNIQUE,
    value       double precision,
    unit        text NOT NULL,
    description text NOT NULL,
    numerator   bigint,
    denominator bigint,
    fid         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);

COMMENT ON TABLE {build}.manifest IS 'What this release is: source, method, parameters, privacy model and the verifier''s proof.';
COMMENT ON COLUMN {build}.manifest.release_name IS 'The schema name of this release.';
COMMENT ON COLUMN {build}.manifest.dataset IS 'The dataset the release was made from.';
COMMENT ON COLUMN {build}.manifest.method IS 'Anonymization method (see the README).';
COMMENT ON COLUMN {build}.manifest.parameters IS 'Method parameters as given (with defaults filled in).';
COMMENT ON COLUMN {build}.manifest.k IS 'Anonymity threshold k.';
COMMENT ON COLUMN {build}.manifest.k_counts IS 'What k counts: distinct persons, always (privacy rule 1).';
COMMENT ON COLUMN {build}.manifest.privacy_model IS 'The privacy model the verifier proved on this release.';
COMMENT ON COLUMN {build}.manifest.window_start IS 'Start of the time window (inclusive); no finer time is published.';
COMMENT ON COLUMN {build}.manifest.window_end IS 'End of the time window (exclusive).';
COMMENT ON COLUMN {build}.manifest.srid IS 'SRID of every geometry in this release (a metric CRS).';
COMMENT ON COLUMN {build}.manifest.input_fingerprint IS 'HMAC-SHA256 (installation secret) over the source file digest, dataset and window: identifies the input to this installation only.';
COMMENT ON COLUMN {build}.manifest.count_interval IS 'Interval size of the interval filter (seed 004 §4.2) every published count went through: a count c >= k is published as the lower end of the interval [k + count_interval i, k + count_interval (i + 1)) holding it; 1 means exact counts (asked for by the operator).';
COMMENT ON COLUMN {build}.manifest.composition_risk IS 'NULL, or the operator''s reason for publishing although the window overlaps a published release of the dataset or is shorter than the minimum (privacy rule 4).';
COMMENT ON COLUMN {build}.manifest.precision_risk IS 'NULL, or the operator''s reason for publishing although a parameter that sets a published precision (lattice, cell size, epsilon) is below the 50 m floor (privacy rule 7).';
COMMENT ON COLUMN {build}.manifest.attack_risk IS 'NULL, or the operator''s reason for publishing although an attack of the suite (see metrics attack_*) measured a re-identification risk above 1/k that the method''s privacy model does not cover (privacy rule 9).';
COMMENT ON COLUMN {build}.manifest.source_fingerprint IS 'HMAC-SHA256 (installation secret) of the source file''s digest: the ledger''s key, the same for every release of the same file under any dataset name.';
COMMENT ON COLUMN {build}.manifest.trajectories_in IS 'Trajectories in the window before anonymization (interval-filtered: lower end of an interval of size count_interval; NULL below k).';
COMMENT ON COLUMN {build}.manifest.persons_in IS 'Distinct persons in the window before anonymization (interval-filtered).';
COMMENT ON COLUMN {build}.manifest.points_in IS 'GPS fixes in the window before anonymization (interval-filtered).';
COMMENT ON COLUMN {build}.manifest.trajectories_out IS 'Published units, named by published_unit (exact: the size of the release''s main table).';
COMMENT ON COLUMN {build}.manifest.published_unit IS 'What trajectories_out and suppressed count: trajectories (generalization) or the family''s unit (e.g. objects: one per person).';
COMMENT ON COLUMN {build}.manifest.suppressed IS 'Input units (see published_unit) of which nothing was published (interval-filtered; NULL when between 1 and k - 1).';
COMMENT ON COLUMN {build}.manifest.verifier_result IS 'The independent verifier''s findings on exactly these tables; its counts are interval-filtered like the manifest''s (0, NULL below k, else the lower end of the count_interval-wide interval from k).';
COMMENT ON COLUMN {build}.manifest.code_version IS 'Version of the anonymizers package that built the release.';
COMMENT ON COLUMN {build}.manifest.fid IS 'Row number (the feature id GIS tools use); the manifest has one row.';
COMMENT ON COLUMN {build}.metrics.fid IS 'Row number (the feature id GIS tools use); name is the metric''s key.';
COMMENT ON TABLE {build}.metrics IS 'Utility and risk measures computed on this release.';
COMMENT ON COLUMN {build}.metrics.name IS 'Metric name.';
COMMENT ON COLUMN {build}.metrics.value IS 'Metric value.';
COMMENT ON COLUMN {build}.metrics.unit IS 'Unit of the value.';
COMMENT ON COLUMN {build}.metrics.description IS 'What the metric measures and how.';
