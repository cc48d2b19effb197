-- Aggregates, zones=voronoi: the method of the published release named release_name (no
-- row: none of that name), whether it has a cells table of polygons, and its SRID.
-- Params: release_name.
SELECT r.method,
       (SELECT type IN ('POLYGON', 'MULTIPOLYGON') FROM geometry_columns
        WHERE f_table_schema = r.release_name AND f_table_name = 'cells'
          AND f_geometry_column = 'geom') AS has_cells,
       (SELECT srid FROM geometry_columns
        WHERE f_table_schema = r.release_name AND f_table_name = 'cells'
          AND f_geometry_column = 'geom') AS cells_srid
FROM catalog.releases AS r
WHERE r.release_name = %(release_name)s;
