-- Spatial index of a staged partition (built in parallel with index_time.sql).
-- Identifiers: partition.
CREATE INDEX ON {partition} USING gist (geom);
