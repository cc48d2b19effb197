-- Attach the last leaf (no upper end) to its dataset's partition. Its CHECKs imply the
-- bounds: no scan. Params: lower. Identifiers: partition, leaf.
ALTER TABLE {partition} ATTACH PARTITION {leaf} FOR VALUES FROM (%(lower)s) TO (MAXVALUE);
