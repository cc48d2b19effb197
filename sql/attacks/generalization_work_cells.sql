-- The work cells the release publishes and their release cell ids. Identifiers: work.
SELECT cell_id, release_cell_id FROM {work}.cell_map ORDER BY cell_id;
