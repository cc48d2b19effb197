-- Statistics of a leaf, once its rows are committed and counted (store.py, _analyze).
-- ANALYZE samples 300 x default_statistics_target rows per table: split in n leaves, a
-- dataset would be sampled n times over (ANALYZE was a fifth of a leaf's time). Each leaf
-- takes 1/n of the target, so the dataset keeps the sample it had as one table.
-- Params: leaves (how many the dataset has). Identifiers: leaf.
SELECT set_config('default_statistics_target', greatest(
    10, current_setting('default_statistics_target')::integer / %(leaves)s)::text, true);
ANALYZE {leaf};
