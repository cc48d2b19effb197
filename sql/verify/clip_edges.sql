-- Where the published polygons of one column are cut by a clip box: the axis-aligned
-- segments (of positive length) that lie on a side of the column's extent, as (side, value)
-- pairs. A Voronoi tessellation clipped to a box has such edges on each side it reaches; a
-- side reached only by a Voronoi vertex has none (its position comes from generators).
-- Identifiers: source (schema, table), column.
WITH extent AS (
    SELECT ST_Extent({column})::box2d AS b FROM {source}
), segments AS (
    SELECT ST_X(ST_StartPoint(d.geom)) AS x1, ST_Y(ST_StartPoint(d.geom)) AS y1,
           ST_X(ST_EndPoint(d.geom)) AS x2, ST_Y(ST_EndPoint(d.geom)) AS y2
    FROM {source} AS r
    CROSS JOIN LATERAL ST_DumpSegments(r.{column}) AS d
)
SELECT DISTINCT side, value
FROM segments, extent AS e
CROSS JOIN LATERAL (VALUES
    ('west', ST_XMin(e.b), x1 = x2 AND abs(x1 - ST_XMin(e.b)) < 1e-6 AND y1 <> y2),
    ('east', ST_XMax(e.b), x1 = x2 AND abs(x1 - ST_XMax(e.b)) < 1e-6 AND y1 <> y2),
    ('south', ST_YMin(e.b), y1 = y2 AND abs(y1 - ST_YMin(e.b)) < 1e-6 AND x1 <> x2),
    ('north', ST_YMax(e.b), y1 = y2 AND abs(y1 - ST_YMax(e.b)) < 1e-6 AND x1 <> x2)
) AS s(side, value, cut)
WHERE s.cut
ORDER BY side;
