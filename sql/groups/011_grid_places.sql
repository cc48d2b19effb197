-- Trajectory groups (seed 004), places of a GPS dataset: the cells of a fixed square grid
-- of cell_size metres in the release's metric CRS, anchored at its origin (a lattice that
-- does not follow the data, privacy rule 2). A fix visits the cell that holds it
-- (cells are half-open, [x0, x0 + size) x [y0, y0 + size)); place_id is 'column:row'.
-- Only fixes inside the CRS's area of use are mapped. Of several fixes of a trajectory at
-- one instant the one of the first place (by name) is kept. Neighbours are cells sharing
-- an edge or a corner (as ST_Touches), among the cells any fix of the window visited.
-- Params: dataset_id, window_start, window_end, srid, cell_size, lon_min, lon_max,
-- lat_min, lat_max. Identifiers: work.
DROP TABLE IF EXISTS {work}.tg_fix_places, {work}.tg_places, {work}.tg_neighbours;
CREATE TABLE {work}.tg_fix_places AS
WITH cells AS (
    SELECT p.traj_id, p.user_id, p.t,
           floor(ST_X(xy) / %(cell_size)s::float8)::bigint || ':'
           || floor(ST_Y(xy) / %(cell_size)s::float8)::bigint AS place_id
    FROM raw.points AS p
    CROSS JOIN LATERAL ST_Transform(p.geom, %(srid)s) AS xy
    WHERE p.dataset_id = %(dataset_id)s
      AND p.t >= %(window_start)s::timestamptz
      AND p.t < %(window_end)s::timestamptz
      AND p.lon BETWEEN %(lon_min)s AND %(lon_max)s
      AND p.lat BETWEEN %(lat_min)s AND %(lat_max)s
)
SELECT DISTINCT ON (traj_id, t) traj_id, user_id, t, place_id
FROM cells
ORDER BY traj_id, t, place_id;

CREATE TABLE {work}.tg_places AS
SELECT c.place_id,
       ST_MakeEnvelope(c.col * %(cell_size)s::float8, c.row * %(cell_size)s::float8,
                       (c.col + 1) * %(cell_size)s::float8, (c.row + 1) * %(cell_size)s::float8,
                       %(srid)s) AS geom,
       c.col, c.row
FROM (SELECT DISTINCT place_id,
             split_part(place_id, ':', 1)::bigint AS col,
             split_part(place_id, ':', 2)::bigint AS row
      FROM {work}.tg_fix_places) AS c;
ALTER TABLE {work}.tg_places ADD PRIMARY KEY (place_id);
CREATE INDEX ON {work}.tg_places (col, row);

CREATE TABLE {work}.tg_neighbours AS
SELECT a.place_id AS a, b.place_id AS b
FROM {work}.tg_places AS a
JOIN {work}.tg_places AS b
  ON b.col BETWEEN a.col - 1 AND a.col + 1
 AND b.row BETWEEN a.row - 1 AND a.row + 1
 AND b.place_id <> a.place_id;
