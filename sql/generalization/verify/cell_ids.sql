-- The generalization verifier: the ids of the published cells (each must be visited by k
-- persons). Identifiers: release.
SELECT cell_id FROM {release}.cells
