-- A dataset's partition of raw.points, itself partitioned into the leaves its points
-- were loaded into (create_leaf.sql), by range of the surrogate traj_key: bounds that
-- name no trajectory (anonymizers/loading/leaves.py says why).
-- Params: dataset_id. Identifiers: partition.
CREATE TABLE {partition} (
    LIKE raw.points INCLUDING DEFAULTS INCLUDING GENERATED,
    CONSTRAINT in_dataset CHECK (dataset_id = %(dataset_id)s)
) PARTITION BY RANGE (traj_key);
