-- Indexes of a filled leaf, in the transaction that created it (so the index builds are
-- not WAL-logged either). They are raw.points' own (010_raw.sql, 011_raw_points_indexes.sql):
-- attaching adopts them instead of building them again.
-- Leaves load in parallel, one connection each: parallel workers per build would only
-- compete with the other leaves for the same cores. The sorts of the builds stay in
-- memory with 256MB (1M fixes: < 100MB), whatever the server's default (64MB).
-- Identifiers: leaf.
SET LOCAL max_parallel_maintenance_workers = 0;
SELECT set_config('maintenance_work_mem', greatest(
    pg_size_bytes(current_setting('maintenance_work_mem')), pg_size_bytes('256MB')) / 1024
    || 'kB', true);
CREATE INDEX ON {leaf} (traj_id, t);
CREATE INDEX ON {leaf} (t);
