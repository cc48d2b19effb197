-- A dataset's partition of raw.points, itself partitioned into the leaves its points
-- were loaded into (create_leaf.sql), by traj_id range in byte order ("C" collation:
-- the order the loader sorts ids in to cut the leaves).
-- Params: dataset_id. Identifiers: partition.
CREATE TABLE {partition} (
    LIKE raw.points INCLUDING DEFAULTS INCLUDING GENERATED,
    CONSTRAINT in_dataset CHECK (dataset_id = %(dataset_id)s)
) PARTITION BY RANGE (traj_id COLLATE "C");
