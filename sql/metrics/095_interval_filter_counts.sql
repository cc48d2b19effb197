-- The last pass over a release's figures (privacy rules 3, 4 and 8), shared by every family.
-- Params: k, count_interval. Identifiers: build.
--
-- 1. Every count in metrics and metric_series goes through the interval filter
--    (catalog.interval_count, seed 004 §4.2): 0 stays 0, 1 .. k - 1 is suppressed (NULL),
--    anything else becomes the lower end of the interval of size count_interval, starting
--    at k, that holds it.
-- 2. A ratio of counts (a row with a numerator or a denominator: the writer put the exact
--    counts there) gets both counts filtered the same way, a signed numerator by its
--    magnitude, and value = filtered numerator / filtered denominator; NULL when the
--    denominator is 0 or suppressed, or the numerator suppressed. An exact quotient would
--    give both counts back by its continued fraction.
-- 3. An attack probability at or below 1/k that is exactly 1 / c (the largest risk: one
--    over the smallest set of candidates, or an average where every set is as large) is
--    published as 1 / (c filtered): c, a count of persons, would otherwise come back
--    exact. The filtered c is at most c, so the published risk is never lower than the
--    measured one. Any other probability (an average over the attacked persons: its exact
--    value is a fraction whose denominator is their number) is rounded up to three
--    decimals. A maximum above 1/k that is 1 / c stays as measured: the gate stops such a
--    release unless the operator accepted the model's risk, and then it is what must be
--    shown (rule 9).
UPDATE {build}.metrics
SET value = catalog.interval_count(value::bigint, %(k)s, %(count_interval)s)
WHERE unit = 'count' AND value IS NOT NULL
  AND value IS DISTINCT FROM catalog.interval_count(value::bigint, %(k)s, %(count_interval)s);
UPDATE {build}.metric_series
SET value = catalog.interval_count(value::bigint, %(k)s, %(count_interval)s)
WHERE unit = 'count' AND value IS NOT NULL
  AND value IS DISTINCT FROM catalog.interval_count(value::bigint, %(k)s, %(count_interval)s);

UPDATE {build}.metrics AS m
SET numerator = f.numerator, denominator = f.denominator,
    value = CASE WHEN f.denominator > 0 THEN f.numerator::float8 / f.denominator END
FROM {build}.metrics AS r
CROSS JOIN LATERAL (SELECT
    sign(r.numerator)::bigint
        * catalog.interval_count(abs(r.numerator), %(k)s, %(count_interval)s) AS numerator,
    catalog.interval_count(r.denominator, %(k)s, %(count_interval)s) AS denominator) AS f
WHERE r.name = m.name AND (r.numerator IS NOT NULL OR r.denominator IS NOT NULL);
UPDATE {build}.metric_series AS m
SET numerator = f.numerator, denominator = f.denominator,
    value = CASE WHEN f.denominator > 0 THEN f.numerator::float8 / f.denominator END
FROM {build}.metric_series AS r
CROSS JOIN LATERAL (SELECT
    sign(r.numerator)::bigint
        * catalog.interval_count(abs(r.numerator), %(k)s, %(count_interval)s) AS numerator,
    catalog.interval_count(r.denominator, %(k)s, %(count_interval)s) AS denominator) AS f
WHERE (r.series, r.x) = (m.series, m.x)
  AND (r.numerator IS NOT NULL OR r.denominator IS NOT NULL);

UPDATE {build}.metrics
SET value = 1.0 / catalog.interval_count(round(1 / value)::bigint, %(k)s, %(count_interval)s)
WHERE unit = 'probability' AND value > 0 AND value <= 1.0 / %(k)s + 1e-12
  AND abs(value * round(1 / value) - 1) < 1e-12;
UPDATE {build}.metric_series
SET value = 1.0 / catalog.interval_count(round(1 / value)::bigint, %(k)s, %(count_interval)s)
WHERE unit = 'probability' AND value > 0 AND value <= 1.0 / %(k)s + 1e-12
  AND abs(value * round(1 / value) - 1) < 1e-12;
UPDATE {build}.metrics
SET value = ceil(value::numeric * 1000) / 1000
WHERE unit = 'probability' AND value > 0 AND abs(value * round(1 / value) - 1) >= 1e-12;
UPDATE {build}.metric_series
SET value = ceil(value::numeric * 1000) / 1000
WHERE unit = 'probability' AND value > 0 AND abs(value * round(1 / value) - 1) >= 1e-12;
