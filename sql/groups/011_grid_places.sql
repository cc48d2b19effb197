-- Trajectory groups (seed 004), places of a GPS dataset: the cells of a fixed square grid
-- of cell_size metres in the release's metric CRS, anchored at its origin (a lattice that
-- does not follow the data, privacy rule 2). A fix visits the cell that holds it
-- (cells are half-open, [x0, x0 + size) x [y0, y0 + size)); place_id is 'column:row'.
-- Only fixes inside the CRS's area of use are mapped. Of several fixes of a trajectory at
-- one instant the one of the first place (by name) is kept. Neighbours are cells sharing
-- an edge or a corner (as ST_Touches).
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

-- The places are the visited cells and every cell up to two cells away (ring: the lattice
-- distance to the nearest visited cell, 0-2): a common origin or destination group names a
-- cell and all 8 cells around it (a lattice relation, whether anybody visited them or not:
-- which neighbours were visited must not show), and its centre is a visited cell or one
-- next to a visited cell (ring 0 or 1).
CREATE TABLE {work}.tg_places AS
WITH visited AS (
    SELECT DISTINCT split_part(place_id, ':', 1)::bigint AS col,
                    split_part(place_id, ':', 2)::bigint AS row
    FROM {work}.tg_fix_places
), near AS (
    SELECT v.col + dc AS col, v.row + dr AS row, min(greatest(abs(dc), abs(dr))) AS ring
    FROM visited AS v, generate_series(-2, 2) AS dc, generate_series(-2, 2) AS dr
    GROUP BY 1, 2
)
SELECT n.col || ':' || n.row AS place_id,
       ST_MakeEnvelope(n.col * %(cell_size)s::float8, n.row * %(cell_size)s::float8,
                       (n.col + 1) * %(cell_size)s::float8, (n.row + 1) * %(cell_size)s::float8,
                       %(srid)s) AS geom,
       n.col, n.row, n.ring
FROM near AS n;
ALTER TABLE {work}.tg_places ADD PRIMARY KEY (place_id);

-- Every cell within one cell of a visited one, with all 8 cells around it.
CREATE TABLE {work}.tg_neighbours AS
SELECT c.place_id AS a, (c.col + dc) || ':' || (c.row + dr) AS b
FROM {work}.tg_places AS c, generate_series(-1, 1) AS dc, generate_series(-1, 1) AS dr
WHERE c.ring <= 1 AND (dc, dr) <> (0, 0);
