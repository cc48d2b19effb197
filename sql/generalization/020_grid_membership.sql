-- Fixed square grid (the baseline tessellation): each point's cell is floor(x / size),
-- floor(y / size) in the metric CRS, so the grid is anchored at the CRS origin and two
-- releases with the same cell size share their grid. Only visited cells are materialised.
-- Params: cell_size (metres), srid. Identifiers: work.
DROP TABLE IF EXISTS {work}.point_cells;
CREATE TABLE {work}.point_cells AS
SELECT traj_id, user_id, t,
       floor(ST_X(geom) / %(cell_size)s)::bigint AS ix,
       floor(ST_Y(geom) / %(cell_size)s)::bigint AS iy
FROM {work}.points;

DROP TABLE IF EXISTS {work}.cells;
CREATE TABLE {work}.cells AS
SELECT row_number() OVER (ORDER BY ix, iy)::integer AS cell_id,
       ix, iy,
       ST_MakeEnvelope(ix * %(cell_size)s, iy * %(cell_size)s,
                       (ix + 1) * %(cell_size)s, (iy + 1) * %(cell_size)s,
                       %(srid)s)::geometry(Polygon, %(srid)s) AS geom,
       -- The square's centre, not the mean of its points: it reveals nobody's position.
       ST_SetSRID(ST_MakePoint((ix + 0.5) * %(cell_size)s, (iy + 0.5) * %(cell_size)s),
                  %(srid)s)::geometry(Point, %(srid)s) AS centroid
FROM (SELECT DISTINCT ix, iy FROM {work}.point_cells) AS visited;
CREATE UNIQUE INDEX ON {work}.cells (ix, iy);

-- point_cells gets the cell id the later steps use (membership is then method-agnostic).
DROP TABLE IF EXISTS {work}.memberships;
CREATE TABLE {work}.memberships AS
SELECT pc.traj_id, pc.user_id, pc.t, c.cell_id
FROM {work}.point_cells AS pc
JOIN {work}.cells AS c USING (ix, iy);
DROP TABLE {work}.point_cells;
