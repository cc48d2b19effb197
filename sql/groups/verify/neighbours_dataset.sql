-- Verifier of trajectory groups (seed 004), place-sequence dataset: the neighbours of each
-- place (§4.3.3, "connected by a single route"): the edges of the Delaunay triangulation of
-- all the dataset's places (tgv_places, fixes_dataset.sql), in both directions. An
-- edge's ends are matched to the nearest place (the triangulation returns the input
-- coordinates, so the nearest is the place itself).
DROP TABLE IF EXISTS pg_temp.tgv_neighbours;
CREATE TEMP TABLE tgv_neighbours ON COMMIT DROP AS
WITH edges AS (
    SELECT (ST_Dump(ST_DelaunayTriangles(ST_Collect(geom), 0, 1))).geom AS edge
    FROM tgv_places
), ends AS (
    SELECT a.place AS a, b.place AS b
    FROM edges AS e
    CROSS JOIN LATERAL (SELECT place FROM tgv_places
                        ORDER BY geom <-> ST_StartPoint(e.edge) LIMIT 1) AS a
    CROSS JOIN LATERAL (SELECT place FROM tgv_places
                        ORDER BY geom <-> ST_EndPoint(e.edge) LIMIT 1) AS b
)
SELECT a, b FROM ends WHERE a <> b
UNION
SELECT b, a FROM ends WHERE a <> b;
CREATE INDEX ON tgv_neighbours (a);
