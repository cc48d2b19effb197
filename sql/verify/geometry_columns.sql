-- Geometry columns of a release schema. Params: schema.
SELECT f_table_name, f_geometry_column
FROM geometry_columns
WHERE f_table_schema = %(schema)s
ORDER BY 1, 2;
