-- Every published figure of a release: the scalar metrics and the series (as series name).
-- Identifiers: release.
SELECT name, unit, value FROM {release}.metrics
UNION ALL
SELECT series, unit, value FROM {release}.metric_series
ORDER BY 1;
