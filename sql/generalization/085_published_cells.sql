-- The work cells a built release publishes and their release cell ids ({work}.cell_map of
-- 080_build_release.sql), ascending by work cell id: what the metrics and the attack at
-- release map the run's sequences with (sequences.relabel). Identifiers: work.
SELECT cell_id, release_cell_id FROM {work}.cell_map ORDER BY cell_id;
