-- The edge each pair of neighbouring cells shares (a_id < b_id; neighbours share an edge,
-- not just a corner: Algorithm 3, line 1), for the planner's pairs
-- (140_neighbour_pairs.sql) and the crossing step's shortcut (128_crossings.sql).
-- A shared edge lies on the bisector of the two generators: it is kept as that line,
-- through the generators' midpoint (mx, my) along the unit vector (ux, uy), and the
-- stretch [t_min, t_max] of it the polygons share (the extreme projections of the
-- vertices of the lines of their intersection, which GEOS may split into several pieces;
-- a stray point in it would only widen the edge and send a segment the wrong way), with the
-- generators (gax, gay), (gbx, gby). Rebuilt with the cells (tessellation._rebuild_cells).
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.cell_edges;
CREATE TABLE {work}.cell_edges AS
WITH pairs AS (
    SELECT a.cell_id AS a_id, b.cell_id AS b_id,
           ST_X(a.centroid) AS gax, ST_Y(a.centroid) AS gay,
           ST_X(b.centroid) AS gbx, ST_Y(b.centroid) AS gby,
           ST_Intersection(a.geom, b.geom) AS shared
    FROM {work}.cells AS a
    JOIN {work}.cells AS b
      ON a.cell_id < b.cell_id AND ST_Touches(a.geom, b.geom)
     AND ST_Relate(a.geom, b.geom, '****1****')
), frames AS (
    SELECT p.*, (gax + gbx) / 2 AS mx, (gay + gby) / 2 AS my,
           (gay - gby) / n.length AS ux, (gbx - gax) / n.length AS uy
    FROM pairs AS p
    CROSS JOIN LATERAL (SELECT sqrt((gbx - gax) ^ 2 + (gby - gay) ^ 2) AS length) AS n
)
SELECT f.a_id, f.b_id, f.gax, f.gay, f.gbx, f.gby, f.mx, f.my, f.ux, f.uy,
       min(v.t) AS t_min, max(v.t) AS t_max
FROM frames AS f
CROSS JOIN LATERAL (
    SELECT (ST_X(d.geom) - f.mx) * f.ux + (ST_Y(d.geom) - f.my) * f.uy AS t
    FROM ST_DumpPoints(ST_CollectionExtract(f.shared, 2)) AS d
) AS v
GROUP BY f.a_id, f.b_id, f.gax, f.gay, f.gbx, f.gby, f.mx, f.my, f.ux, f.uy;
ALTER TABLE {work}.cell_edges ADD PRIMARY KEY (a_id, b_id);
ANALYZE {work}.cell_edges;
