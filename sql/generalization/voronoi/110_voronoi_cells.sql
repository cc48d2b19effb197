-- Voronoi cells of the current generators, clipped to the data's extent plus a margin
-- (so every point of the window lies in a cell). ST_Dump does not return cells in the
-- order of the input points, so each cell is linked back to its generator by a spatial
-- join (a generator lies inside its own cell). Cells are convex (Voronoi cells clipped
-- to a rectangle), which the crossing step relies on.
-- Input {work}.generators(gen_id, geom, n_points, n_persons). Params: srid, margin.
-- Identifiers: work.
-- The previous cells are kept as cells_prev: membership is then updated only where a
-- polygon changed (125_membership_update.sql).
CREATE INDEX IF NOT EXISTS generators_geom_idx ON {work}.generators USING gist (geom);
ANALYZE {work}.generators;
DROP TABLE IF EXISTS {work}.cells_prev;
ALTER TABLE IF EXISTS {work}.cells RENAME TO cells_prev;
CREATE TABLE {work}.cells AS
WITH extent AS (
    SELECT ST_SetSRID(ST_Expand(ST_Extent(geom)::geometry, %(margin)s), %(srid)s) AS box
    FROM {work}.points
), dumped AS (
    SELECT (ST_Dump(ST_VoronoiPolygons(
               (SELECT ST_Collect(geom) FROM {work}.generators), 0, e.box))).geom AS cell
    FROM extent AS e
)
SELECT g.gen_id AS cell_id,
       ST_Intersection(d.cell, e.box)::geometry(Polygon, %(srid)s) AS geom,
       g.geom::geometry(Point, %(srid)s) AS centroid,
       g.n_persons AS generator_persons
FROM dumped AS d
JOIN {work}.generators AS g ON ST_Contains(d.cell, g.geom)
CROSS JOIN extent AS e;
ALTER TABLE {work}.cells ADD PRIMARY KEY (cell_id);
CREATE INDEX ON {work}.cells USING gist (geom);
ANALYZE {work}.cells;
