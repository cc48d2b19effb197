-- Attach the loaded, indexed and analysed points to raw.points. Their CHECK constraint
-- (create_partition.sql) lets ATTACH skip its validation scan; the indexes match the
-- parent's, so they are adopted.
-- Params: dataset_id. Identifiers: partition.
ALTER TABLE raw.points ATTACH PARTITION {partition} FOR VALUES IN (%(dataset_id)s);
