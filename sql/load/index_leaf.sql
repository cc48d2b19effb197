-- The index of a filled leaf, in the transaction that created it (so the build is not
-- WAL-logged either). It is raw.points' own (010_raw.sql, 011_raw_points_indexes.sql):
-- attaching adopts it instead of building it again.
-- Leaves load in parallel, one connection each: parallel workers per build would only
-- compete with the other leaves for the same cores. The sort of the build stays in
-- memory with 256MB (1M fixes: < 50MB), whatever the server's default (64MB).
-- Identifiers: leaf.
SET LOCAL max_parallel_maintenance_workers = 0;
SELECT set_config('maintenance_work_mem', greatest(
    pg_size_bytes(current_setting('maintenance_work_mem')), pg_size_bytes('256MB')) / 1024
    || 'kB', true);
CREATE INDEX ON {leaf} (t);
