-- The dataset QIDs are loaded for or generated from, locked against a concurrent
-- `load --replace` until this transaction ends (that replace then deletes the old row and,
-- by ON DELETE CASCADE, the QIDs written here: they refer to the old data). No row: no such
-- dataset.
-- Params: name.
SELECT dataset_id, t_min, t_max, lon_median, lat_median
FROM raw.datasets
WHERE name = %(name)s
FOR KEY SHARE;
