-- Trajectory-order and window indexes of a staged partition (matching raw.points' own).
-- Identifiers: partition.
CREATE INDEX ON {partition} (traj_id, t);
CREATE INDEX ON {partition} (t);
