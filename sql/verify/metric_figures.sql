-- Every figure of a release, scalar and series, as one json object per row (its columns by
-- name: a release made before metrics carried numerator and denominator has none, and the
-- verifier reads them as NULL). Identifiers: release.
SELECT to_jsonb(m) AS figure FROM {release}.metrics AS m
UNION ALL
SELECT to_jsonb(s) FROM {release}.metric_series AS s;
