-- Index the loaded points and attach them to raw.points. The CHECK constraint lets
-- ATTACH skip its validation scan; the indexes match the parent's, so they are adopted.
-- Params: dataset_id. Identifiers: partition.
ALTER TABLE {partition} ADD CHECK (dataset_id = %(dataset_id)s);
CREATE INDEX ON {partition} (dataset_id, traj_id, t);
CREATE INDEX ON {partition} (dataset_id, t);
CREATE INDEX ON {partition} USING gist (geom);
ALTER TABLE raw.points ATTACH PARTITION {partition} FOR VALUES IN (%(dataset_id)s);
ANALYZE {partition};
