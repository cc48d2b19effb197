-- The dataset a release is cut from, by name: its id, the plain digest of its source file
-- (kept in raw.datasets only; the gate keys it before it travels), and the span and median
-- position of its fixes. Params: name.
SELECT dataset_id, source_sha256, t_min, t_max, lon_median, lat_median
FROM raw.datasets
WHERE name = %(name)s;
