-- The generalization verifier: the distinct cell sequences of the published trajectories
-- (the support of each is checked, and the continuations of their prefixes).
-- Identifiers: release.
SELECT DISTINCT cells FROM {release}.trajectories
