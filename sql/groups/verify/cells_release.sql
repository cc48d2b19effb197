-- Verifier of trajectory groups (seed 004), places = voronoi: the method of the published
-- release named by the manifest's places_release (no row when none has that name).
-- Params: release_name.
SELECT method FROM catalog.releases WHERE release_name = %(release_name)s;
