-- Attach a dataset's partition (its leaves loaded, indexed and analysed) to raw.points.
-- Its CHECK constraint lets ATTACH skip its validation scan; the leaves' indexes match
-- the parent's, so they are adopted, not built.
-- Params: dataset_id. Identifiers: partition.
ALTER TABLE raw.points ATTACH PARTITION {partition} FOR VALUES IN (%(dataset_id)s);
