-- Attach the loaded and indexed points to raw.points. The CHECK constraint lets ATTACH
-- skip its validation scan; the indexes match the parent's, so they are adopted.
-- Params: dataset_id. Identifiers: partition.
ALTER TABLE {partition} ADD CHECK (dataset_id = %(dataset_id)s);
ALTER TABLE raw.points ATTACH PARTITION {partition} FOR VALUES IN (%(dataset_id)s);
ANALYZE {partition};
