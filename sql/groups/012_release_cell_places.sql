-- Trajectory groups (seed 004), places of a GPS dataset: the cells of a published
-- generalization release (its Voronoi cells, or its grid), each published already with at
-- least k persons: public places. A fix visits the cell that holds it (a fix on a shared
-- edge, the first cell by name); place_id is the cell's id in that release. Neighbours are
-- cells that touch (ST_Touches). Places are published in this release's CRS.
-- Params: dataset_id, window_start, window_end, srid, cells_srid.
-- Identifiers: work, cells (the release's cells table).
DROP TABLE IF EXISTS {work}.tg_fix_places, {work}.tg_places, {work}.tg_neighbours;
CREATE TABLE {work}.tg_places AS
SELECT c.cell_id::text AS place_id, ST_Transform(c.geom, %(srid)s) AS geom,
       c.geom AS cell_geom
FROM {cells} AS c;
ALTER TABLE {work}.tg_places ADD PRIMARY KEY (place_id);
CREATE INDEX ON {work}.tg_places USING gist (cell_geom);
ANALYZE {work}.tg_places;

CREATE TABLE {work}.tg_fix_places AS
SELECT DISTINCT ON (p.traj_id, p.t) p.traj_id, p.user_id, p.t, c.place_id
FROM raw.points AS p
JOIN {work}.tg_places AS c
  ON ST_Intersects(c.cell_geom, ST_Transform(p.geom, %(cells_srid)s))
WHERE p.dataset_id = %(dataset_id)s
  AND p.t >= %(window_start)s::timestamptz
  AND p.t < %(window_end)s::timestamptz
ORDER BY p.traj_id, p.t, c.place_id;

CREATE TABLE {work}.tg_neighbours AS
SELECT a.place_id AS a, b.place_id AS b
FROM {work}.tg_places AS a
JOIN {work}.tg_places AS b
  ON a.place_id <> b.place_id AND ST_Touches(a.cell_geom, b.cell_geom);
