-- Trajectory groups (seed 004), places = voronoi: the method of the published release named
-- places_release (its cells are the places only if it is a generalization release; no row
-- when no release has that name). Params: release_name.
SELECT method FROM catalog.releases WHERE release_name = %(release_name)s;
