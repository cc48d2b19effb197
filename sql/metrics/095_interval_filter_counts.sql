-- The last pass over a release's figures (privacy rules 3 and 4): every count in metrics
-- and metric_series goes through the interval filter (catalog.interval_count, seed 004
-- §4.2): 0 stays 0, 1 .. k - 1 is suppressed (NULL), anything else becomes the lower end
-- of the interval of size count_interval, starting at k, that holds it. Shared by every
-- family. Params: k, count_interval. Identifiers: build.
UPDATE {build}.metrics
SET value = catalog.interval_count(value::bigint, %(k)s, %(count_interval)s)
WHERE unit = 'count' AND value IS NOT NULL
  AND value IS DISTINCT FROM catalog.interval_count(value::bigint, %(k)s, %(count_interval)s);
UPDATE {build}.metric_series
SET value = catalog.interval_count(value::bigint, %(k)s, %(count_interval)s)
WHERE unit = 'count' AND value IS NOT NULL
  AND value IS DISTINCT FROM catalog.interval_count(value::bigint, %(k)s, %(count_interval)s);
