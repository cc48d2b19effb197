-- Trajectory groups (seed 004), places = voronoi: the SRID of the cells of the published
-- release whose schema is release_name (its cells are the places). Params: release_name.
SELECT Find_SRID(%(release_name)s, 'cells', 'geom') AS srid;
