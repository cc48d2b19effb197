-- Voronoi cells of the current generators, clipped to a box that depends on no single fix
-- (privacy rule 2 of ../shared/DESIGN.md): the extent of the generators (each a snapped
-- position of at least k persons, once progressive generalization is done) expanded by
-- the margin r, then snapped outward to the lattice of `snap` metres. A clip box on the
-- fixes' own extent plus r would publish the westmost, southmost, eastmost and northmost
-- single fix of the window (r is in the manifest). Fixes outside the box lie in no cell:
-- membership treats them as gaps (120_membership.sql).
-- ST_Dump does not return cells in the order of the input points, so each cell is linked
-- back to its generator by a spatial join (a generator lies inside its own cell). Cells
-- are convex (Voronoi cells clipped to a rectangle), which the crossing step relies on.
-- Input {work}.generators(gen_id, geom, n_points, n_persons). Params: srid, margin, snap.
-- Identifiers: work. Produces {work}.clip_box (one row) and {work}.cells.
-- The previous cells and box are kept as cells_prev and clip_box_prev: progressive
-- generalization then looks again only at the fixes of cells whose polygon changed
-- (124_changed_cells.sql).
CREATE INDEX IF NOT EXISTS generators_geom_idx ON {work}.generators USING gist (geom);
ANALYZE {work}.generators;
DROP TABLE IF EXISTS {work}.clip_box_prev;
ALTER TABLE IF EXISTS {work}.clip_box RENAME TO clip_box_prev;
CREATE TABLE {work}.clip_box AS
SELECT x_min, y_min, x_max, y_max, ST_MakeEnvelope(x_min, y_min, x_max, y_max, %(srid)s) AS geom
FROM (
    SELECT floor((ST_XMin(e) - %(margin)s) / %(snap)s) * %(snap)s AS x_min,
           floor((ST_YMin(e) - %(margin)s) / %(snap)s) * %(snap)s AS y_min,
           ceil((ST_XMax(e) + %(margin)s) / %(snap)s) * %(snap)s AS x_max,
           ceil((ST_YMax(e) + %(margin)s) / %(snap)s) * %(snap)s AS y_max
    FROM (SELECT ST_Extent(geom)::box2d AS e FROM {work}.generators) AS g
) AS b;
DROP TABLE IF EXISTS {work}.cells_prev;
ALTER TABLE IF EXISTS {work}.cells RENAME TO cells_prev;
CREATE TABLE {work}.cells AS
WITH dumped AS (
    SELECT (ST_Dump(ST_VoronoiPolygons(
               (SELECT ST_Collect(geom) FROM {work}.generators), 0, b.geom))).geom AS cell
    FROM {work}.clip_box AS b
)
SELECT g.gen_id AS cell_id,
       ST_Intersection(d.cell, b.geom)::geometry(Polygon, %(srid)s) AS geom,
       g.geom::geometry(Point, %(srid)s) AS centroid,
       g.n_persons AS generator_persons
FROM dumped AS d
JOIN {work}.generators AS g ON ST_Contains(d.cell, g.geom)
CROSS JOIN {work}.clip_box AS b;
ALTER TABLE {work}.cells ADD PRIMARY KEY (cell_id);
CREATE INDEX ON {work}.cells USING gist (geom);
ANALYZE {work}.cells;
