-- Verifier of trajectory groups (seed 004), GPS dataset: which grid cell each fix of the
-- window visits, re-derived from raw data (never from the anonymizer's work tables). The
-- cells are the fixed lattice of cell_size metres of the release's CRS, anchored at its
-- origin, half-open ([x0, x0 + size) x [y0, y0 + size)), named 'column:row'. Only fixes
-- inside the CRS's area of use count. Of several fixes of a trajectory at one instant the
-- one in the first cell (by name) is kept. tgv_places holds every cell up to two cells
-- from one some fix of the window visited, with its square: a common origin/destination
-- group names a cell next to a visited one with all 8 cells around it.
-- Params: dataset_id, window_start, window_end (half-open), srid, cell_size, lon_min,
-- lon_max, lat_min, lat_max.
DROP TABLE IF EXISTS pg_temp.tgv_fixes, pg_temp.tgv_places;
CREATE TEMP TABLE tgv_fixes ON COMMIT DROP AS
SELECT DISTINCT ON (c.traj, c.t) c.traj, c.person, c.t, c.col || ':' || c.row AS place,
       c.col, c.row
FROM (SELECT p.traj_id AS traj, p.user_id AS person, p.t,
             floor(ST_X(xy.g) / %(cell_size)s::float8)::bigint AS col,
             floor(ST_Y(xy.g) / %(cell_size)s::float8)::bigint AS row
      FROM raw.points AS p
      CROSS JOIN LATERAL ST_Transform(p.geom, %(srid)s) AS xy(g)
      WHERE p.dataset_id = %(dataset_id)s
        AND p.t >= %(window_start)s::timestamptz
        AND p.t < %(window_end)s::timestamptz
        AND p.lon BETWEEN %(lon_min)s AND %(lon_max)s
        AND p.lat BETWEEN %(lat_min)s AND %(lat_max)s) AS c
ORDER BY c.traj, c.t, place;

CREATE TEMP TABLE tgv_places ON COMMIT DROP AS
SELECT col || ':' || row AS place, col, row,
       ST_MakeEnvelope(col * %(cell_size)s::float8, row * %(cell_size)s::float8,
                       (col + 1) * %(cell_size)s::float8, (row + 1) * %(cell_size)s::float8,
                       %(srid)s) AS geom
FROM (SELECT DISTINCT f.col + dc AS col, f.row + dr AS row
      FROM (SELECT DISTINCT col, row FROM tgv_fixes) AS f,
           generate_series(-2, 2) AS dc, generate_series(-2, 2) AS dr) AS cells;
ALTER TABLE tgv_places ADD PRIMARY KEY (place);
CREATE INDEX ON tgv_places (col, row);
ANALYZE tgv_places;
