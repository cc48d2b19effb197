-- The release's metric series (risk curves among them), in order along each axis.
-- Identifiers: release.
SELECT series, x, value, unit, description FROM {release}.metric_series ORDER BY series, x;
