-- Aggregates verifier, zones=voronoi: the method of the release the manifest names as
-- zones_release (no row: it is not in the ledger) and the SRID of its cells (NULL: it has no
-- cells table of geometries). Params: release_name.
SELECT r.method,
       (SELECT srid FROM geometry_columns
        WHERE f_table_schema = r.release_name AND f_table_name = 'cells'
          AND f_geometry_column = 'geom') AS cells_srid
FROM catalog.releases AS r
WHERE r.release_name = %(release_name)s;
