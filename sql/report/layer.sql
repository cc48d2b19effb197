-- One report layer read from a release table (anonymizers/families/base.py ReportLayer):
-- its geometry as WKB, a count that scales the drawing and its time span, each NULL when
-- the layer has none ({weight}, {t_start}, {t_end} are then NULL, composed in Python).
-- Rows without geometry (a one-cell trajectory's line) are left out.
-- Identifiers: table (schema, name), geometry, weight, t_start, t_end.
SELECT ST_AsBinary({geometry}) AS wkb, {weight}::float8 AS weight,
       {t_start}::timestamptz AS t_start, {t_end}::timestamptz AS t_end
FROM {table}
WHERE {geometry} IS NOT NULL;
