-- Polygon columns of a release schema (where a clip box would show), and columns of any
-- geometry type (GEOMETRY), which may hold polygons. Params: schema.
SELECT f_table_name, f_geometry_column
FROM geometry_columns
WHERE f_table_schema = %(schema)s AND type IN ('POLYGON', 'MULTIPOLYGON', 'GEOMETRY')
ORDER BY 1, 2;
