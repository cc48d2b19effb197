-- Attach a leaf to its dataset's partition, for its key range (the leaf's number times
-- 2^32 and the next: anonymizers/loading/leaves.py). Its CHECKs imply the bounds: no scan.
-- Params: lower, upper. Identifiers: partition, leaf.
ALTER TABLE {partition} ATTACH PARTITION {leaf}
    FOR VALUES FROM (%(lower)s::bigint) TO (%(upper)s::bigint);
