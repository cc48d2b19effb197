-- The generalization verifier: the published flows between cells, with their counts.
-- Identifiers: release.
SELECT from_cell, to_cell, n_persons, n_trajectories FROM {release}.flows
