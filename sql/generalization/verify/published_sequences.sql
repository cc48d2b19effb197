-- The generalization verifier: the distinct cell sequences of the published trajectories
-- (the support of each is checked, and the continuations of their prefixes).
-- cells is a JSON array of cell ids (read as a list of integers). Identifiers: release.
SELECT DISTINCT cells FROM {release}.trajectories
