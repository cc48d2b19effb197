-- Trajectory groups (seed 004), places of a place-sequence dataset (loaded with --places):
-- every fix of the window is a visit of the place at its exact coordinates (the loader
-- stored each visit at its place's lon/lat; raw.places is unique on them). Places are a
-- public network: the release publishes their points as they are (those its groups use).
-- Neighbours (§4.3.3's "neighboring nodes", one route apart) are the edges of the Delaunay
-- triangulation of all the dataset's places: a relation of the public network alone, so no
-- person's movement decides which places a common origin or destination group names.
-- Of several fixes of a trajectory at one instant the one of the first place (by name)
-- is kept.
-- Params: dataset_id, window_start, window_end (half-open), srid. Identifiers: work.
DROP TABLE IF EXISTS {work}.tg_fix_places, {work}.tg_places, {work}.tg_neighbours;
CREATE TABLE {work}.tg_fix_places AS
SELECT DISTINCT ON (p.traj_id, p.t) p.traj_id, p.user_id, p.t, pl.place AS place_id
FROM raw.points AS p
JOIN raw.places AS pl
  ON pl.dataset_id = p.dataset_id AND pl.lon = p.lon AND pl.lat = p.lat
WHERE p.dataset_id = %(dataset_id)s
  AND p.t >= %(window_start)s::timestamptz
  AND p.t < %(window_end)s::timestamptz
ORDER BY p.traj_id, p.t, pl.place;

CREATE TABLE {work}.tg_places AS
SELECT pl.place AS place_id, ST_Transform(pl.geom, %(srid)s) AS geom
FROM raw.places AS pl
WHERE pl.dataset_id = %(dataset_id)s;
ALTER TABLE {work}.tg_places ADD PRIMARY KEY (place_id);
CREATE INDEX ON {work}.tg_places USING gist (geom);
ANALYZE {work}.tg_places;

CREATE TABLE {work}.tg_neighbours AS
WITH edges AS (
    SELECT (ST_Dump(ST_DelaunayTriangles(ST_Collect(geom), 0, 1))).geom AS edge
    FROM {work}.tg_places
)
SELECT DISTINCT a.place_id AS a, b.place_id AS b
FROM edges AS e
-- && finds the edge's end points by the index, ST_Equals keeps the exact ones.
JOIN {work}.tg_places AS a
  ON a.geom && ST_StartPoint(e.edge) AND ST_Equals(a.geom, ST_StartPoint(e.edge))
JOIN {work}.tg_places AS b
  ON b.geom && ST_EndPoint(e.edge) AND ST_Equals(b.geom, ST_EndPoint(e.edge))
WHERE a.place_id <> b.place_id;
