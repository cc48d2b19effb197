-- Start a release's metrics afresh: empty {build}.metrics (created by
-- release/create_manifest.sql) and recreate {build}.metric_series, so that computing the
-- metrics again (a re-run of the step) leaves exactly the same rows. Both tables carry the
-- two counts of a ratio (numerator, denominator: sql/metrics/095_interval_filter_counts.sql
-- filters them and divides).
-- Identifiers: build.
TRUNCATE {build}.metrics RESTART IDENTITY;  -- fid (the row number) starts again at 1
DROP TABLE IF EXISTS {build}.metric_series;
CREATE TABLE {build}.metric_series (
    series      text NOT NULL,
    x           double precision NOT NULL,
    value       double precision,
    unit        text NOT NULL,
    description text NOT NULL,
    numerator   bigint,
    denominator bigint,
    fid         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    UNIQUE (series, x)
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
COMMENT ON COLUMN {build}.metric_series.fid IS
    'Row number (the feature id GIS tools use); (series, x) is the key of a figure.';
COMMENT ON COLUMN {build}.metric_series.description IS
    'What the series measures, what x is, and how it was computed.';
COMMENT ON COLUMN {build}.metric_series.numerator IS
    'For a ratio of counts (a share, a coverage, a mean of counts): the count over the denominator, interval-filtered like every published count (0, at least k, or NULL when between 1 and k - 1; a signed sum keeps its sign); value is exactly numerator / denominator. NULL for any other figure.';
COMMENT ON COLUMN {build}.metric_series.denominator IS
    'For a ratio of counts: the count the numerator is divided by (the whole of a share, the items of a mean), interval-filtered (0, at least k, or NULL when between 1 and k - 1); value is NULL when it is 0 or NULL. NULL for any other figure.';
COMMENT ON COLUMN {build}.metrics.numerator IS
    'For a ratio of counts (a share, a coverage, a mean of counts): the count over the denominator, interval-filtered like every published count (0, at least k, or NULL when between 1 and k - 1; a signed sum keeps its sign); value is exactly numerator / denominator. NULL for any other figure.';
COMMENT ON COLUMN {build}.metrics.denominator IS
    'For a ratio of counts: the count the numerator is divided by (the whole of a share, the items of a mean), interval-filtered (0, at least k, or NULL when between 1 and k - 1); value is NULL when it is 0 or NULL. NULL for any other figure.';
COMMENT ON COLUMN {build}.metrics.value IS
    'Metric value; NULL when undefined or when a count is suppressed because fewer than k persons are behind it. Counts are 0, at least k (interval-filtered, see manifest.count_interval) or NULL. A ratio of counts is the quotient of the filtered numerator and denominator beside it, never of exact counts; a probability of the attack suite at or below 1/k that is 1 / c for a count c is published as 1 / (c interval-filtered), rounded up, never down.';
