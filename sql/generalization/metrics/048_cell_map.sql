-- The release cell id of each work cell the release publishes (Python maps the sequences
-- it reads with it). Identifiers: work.
SELECT cell_id, release_cell_id FROM {work}.cell_map ORDER BY cell_id;
