-- Indexes and statistics of a filled leaf, in the transaction that created it (so the
-- index builds are not WAL-logged either). The indexes are raw.points' own (010_raw.sql,
-- 011_raw_points_indexes.sql): attaching adopts them instead of building them again.
-- Leaves load in parallel, one connection each: parallel workers per build would only
-- compete with the other leaves for the same cores. The sorts of the builds stay in
-- memory with 256MB (1M fixes: < 100MB), whatever the server's default (64MB).
-- ANALYZE samples 300 x default_statistics_target rows per table: split in n leaves, a
-- dataset would be sampled n times over (and ANALYZE was a fifth of a leaf's time). Each
-- leaf takes 1/n of the target, so the dataset keeps the sample it had as one table.
-- Params: leaves (how many the dataset has). Identifiers: leaf.
SET LOCAL max_parallel_maintenance_workers = 0;
SELECT set_config('default_statistics_target', greatest(
    10, current_setting('default_statistics_target')::integer / %(leaves)s)::text, true);
SELECT set_config('maintenance_work_mem', greatest(
    pg_size_bytes(current_setting('maintenance_work_mem')), pg_size_bytes('256MB')) / 1024
    || 'kB', true);
CREATE INDEX ON {leaf} (traj_id, t);
CREATE INDEX ON {leaf} (t);
ANALYZE {leaf};
