-- Attach a leaf (not the last) to its dataset's partition. Its CHECKs imply the bounds:
-- no scan. Params: lower, upper. Identifiers: partition, leaf.
ALTER TABLE {partition} ATTACH PARTITION {leaf} FOR VALUES FROM (%(lower)s) TO (%(upper)s);
