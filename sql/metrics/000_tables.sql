-- Start a release's metrics afresh: empty {build}.metrics (created by
-- release/create_manifest.sql) and recreate {build}.metric_series, so that computing the
-- metrics again (a re-run of the step) leaves exactly the same rows.
-- Identifiers: build.
DELETE FROM {build}.metrics;
DROP TABLE IF EXISTS {build}.metric_series;
CREATE TABLE {build}.metric_series (
    series      text NOT NULL,
    x           double precision NOT NULL,
    value       double precision,
    unit        text NOT NULL,
    description text NOT NULL,
    PRIMARY KEY (series, x)
);
COMMENT ON TABLE {build}.metric_series IS
    'Utility and risk figures of this release that vary along an axis (per iteration of progressive generalization, per fixed length bin, per number of observed points); one row per (series, x). Scalar measures are in metrics. No minimum, maximum or quantile of individual values is published; a count is 0, at least k or NULL (suppressed).';
COMMENT ON COLUMN {build}.metric_series.series IS
    'Series name, e.g. reid.mean, length_histogram.published, progressive.cells.';
COMMENT ON COLUMN {build}.metric_series.x IS
    'Position along the series: iteration (progressive.*), lower edge in metres of a fixed bin (length_histogram.*) or number of observed points (reid.*); see description.';
COMMENT ON COLUMN {build}.metric_series.value IS
    'Value of the series at x (NULL when undefined, e.g. no trajectory has that many points, or when a count is suppressed because fewer than k persons are behind it).';
COMMENT ON COLUMN {build}.metric_series.unit IS 'Unit of the value.';
COMMENT ON COLUMN {build}.metric_series.description IS
    'What the series measures, what x is, and how it was computed.';
COMMENT ON COLUMN {build}.metrics.value IS
    'Metric value; NULL when undefined or when a count is suppressed because fewer than k persons are behind it. Counts are 0, at least k (interval-filtered, see manifest.count_interval) or NULL.';
