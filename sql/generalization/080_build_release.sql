-- Build the release tables in the build schema (a temporary name; published by renaming).
-- Only cells that a published trajectory or flow uses are published, under fresh random
-- ids; trajectories get random UUIDs and a random row order, so nothing joins to raw
-- data or to another release. No timestamps are published: time is the release window.
-- Inputs: {work}.anonymized(anon_id, cells integer[]), {work}.cells(cell_id, geom,
-- centroid), {work}.flows. Flow counts are published through the interval filter
-- (catalog.interval_count, seed 004 §4.2). Params: srid, k, count_interval.
-- Tables as GIS tools take them (GDAL, QGIS): one geometry column each (the cells' points
-- are cell_centroids), a single-column integer key fid (a row number in the random row
-- order) with the ids as ordinary unique attributes, and the cell sequence as a JSON array
-- (GeoPackage has no array type). Identifiers: work, build.
SET LOCAL work_mem = '256MB';
DROP SCHEMA IF EXISTS {build} CASCADE;
CREATE SCHEMA {build};

DROP TABLE IF EXISTS {work}.cell_map;
CREATE TABLE {work}.cell_map AS
SELECT cell_id, (row_number() OVER (ORDER BY random()))::integer AS release_cell_id
FROM (SELECT unnest(cells) AS cell_id FROM {work}.anonymized
      UNION SELECT from_cell FROM {work}.flows
      UNION SELECT to_cell FROM {work}.flows) AS used;
CREATE UNIQUE INDEX ON {work}.cell_map (cell_id);

CREATE TABLE {build}.cells (
    cell_id  integer NOT NULL UNIQUE,
    geom     geometry(Polygon, %(srid)s) NOT NULL,
    fid      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
INSERT INTO {build}.cells (cell_id, geom)
SELECT m.release_cell_id, c.geom
FROM {work}.cells AS c
JOIN {work}.cell_map AS m USING (cell_id)
ORDER BY random();
CREATE INDEX ON {build}.cells USING gist (geom);

CREATE TABLE {build}.cell_centroids (
    cell_id  integer NOT NULL UNIQUE REFERENCES {build}.cells (cell_id),
    geom     geometry(Point, %(srid)s) NOT NULL,
    fid      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
INSERT INTO {build}.cell_centroids (cell_id, geom)
SELECT m.release_cell_id, c.centroid
FROM {work}.cells AS c
JOIN {work}.cell_map AS m USING (cell_id)
ORDER BY random();
CREATE INDEX ON {build}.cell_centroids USING gist (geom);

CREATE TABLE {build}.trajectories (
    traj_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    cells   jsonb NOT NULL,
    n_cells integer NOT NULL,
    geom    geometry(LineString, %(srid)s),
    fid     integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
-- Each distinct work sequence is mapped to published ids and drawn as a line once, then
-- given one row per copy: at 25M fixes 238k distinct sequences make 1.9 million rows (a
-- line per row took 40.4 s, this 21.9 s, timed in one transaction each).
INSERT INTO {build}.trajectories (cells, n_cells, geom)
WITH work_sequences AS (
    SELECT cells, count(*)::integer AS copies FROM {work}.anonymized GROUP BY cells
), sequences AS (
    SELECT array_agg(m.release_cell_id ORDER BY u.ord) AS cells,
           ST_MakeLine(c.centroid ORDER BY u.ord) AS line, w.copies
    FROM (SELECT cells, copies, row_number() OVER () AS id FROM work_sequences) AS w
    CROSS JOIN LATERAL unnest(w.cells) WITH ORDINALITY AS u(cell_id, ord)
    JOIN {work}.cell_map AS m ON m.cell_id = u.cell_id
    JOIN {work}.cells AS c ON c.cell_id = u.cell_id
    GROUP BY w.id, w.copies
)
SELECT to_jsonb(s.cells), cardinality(s.cells), CASE WHEN cardinality(s.cells) >= 2 THEN s.line END
FROM sequences AS s
CROSS JOIN LATERAL generate_series(1, s.copies)
ORDER BY random();
CREATE INDEX ON {build}.trajectories USING gist (geom);

CREATE TABLE {build}.flows (
    from_cell      integer NOT NULL REFERENCES {build}.cells (cell_id),
    to_cell        integer NOT NULL REFERENCES {build}.cells (cell_id),
    n_persons      integer NOT NULL,
    n_trajectories integer NOT NULL,
    geom           geometry(LineString, %(srid)s) NOT NULL,
    UNIQUE (from_cell, to_cell),
    fid            integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
INSERT INTO {build}.flows (from_cell, to_cell, n_persons, n_trajectories, geom)
SELECT mf.release_cell_id, mt.release_cell_id,
       catalog.interval_count(f.n_persons, %(k)s, %(count_interval)s),
       catalog.interval_count(f.n_trajectories, %(k)s, %(count_interval)s),
       ST_MakeLine(cf.centroid, ct.centroid)
FROM {work}.flows AS f
JOIN {work}.cell_map AS mf ON mf.cell_id = f.from_cell
JOIN {work}.cell_map AS mt ON mt.cell_id = f.to_cell
JOIN {work}.cells AS cf ON cf.cell_id = f.from_cell
JOIN {work}.cells AS ct ON ct.cell_id = f.to_cell
ORDER BY random();
CREATE INDEX ON {build}.flows USING gist (geom);

COMMENT ON TABLE {build}.cells IS
    'The areas trajectories are generalized to. Only cells used by a published trajectory or flow.';
COMMENT ON COLUMN {build}.cells.fid IS 'Row number (the feature id GIS tools use); join on cell_id.';
COMMENT ON COLUMN {build}.cells.cell_id IS 'Cell id, drawn at random for this release only.';
COMMENT ON COLUMN {build}.cells.geom IS 'The cell polygon (metric CRS of the release).';
COMMENT ON TABLE {build}.cell_centroids IS
    'The point that stands for each cell in trajectories and flows, one row per row of cells.';
COMMENT ON COLUMN {build}.cell_centroids.fid IS 'Row number (the feature id GIS tools use); join on cell_id.';
COMMENT ON COLUMN {build}.cell_centroids.cell_id IS 'The cell (cells.cell_id).';
COMMENT ON COLUMN {build}.cell_centroids.geom IS
    'The cell''s point: the vertex that trajectories and flows draw for it.';
COMMENT ON TABLE {build}.trajectories IS
    'k-anonymous generalized trajectories: every cell sequence is contained in the sequences of at least k distinct persons.';
COMMENT ON COLUMN {build}.trajectories.fid IS 'Row number (the feature id GIS tools use).';
COMMENT ON COLUMN {build}.trajectories.traj_id IS
    'Random id, fresh in every release: it does not identify a person or join to other releases.';
COMMENT ON COLUMN {build}.trajectories.cells IS
    'Sequence of visited cells (cells.cell_id), in order, as a JSON array of integers (e.g. [12, 7, 33]; in SQL: jsonb_array_elements_text(cells) WITH ORDINALITY).';
COMMENT ON COLUMN {build}.trajectories.n_cells IS 'Number of cells in the sequence.';
COMMENT ON COLUMN {build}.trajectories.geom IS
    'Line through the centroids of the visited cells; NULL when the sequence has one cell.';
COMMENT ON TABLE {build}.flows IS
    'Moves between consecutively visited cells; flows with fewer than k supporters are suppressed.';
COMMENT ON COLUMN {build}.flows.fid IS
    'Row number (the feature id GIS tools use); (from_cell, to_cell) is the key of a flow.';
COMMENT ON COLUMN {build}.flows.from_cell IS 'Cell left (cells.cell_id).';
COMMENT ON COLUMN {build}.flows.to_cell IS 'Cell entered next (cells.cell_id).';
COMMENT ON COLUMN {build}.flows.n_persons IS
    'Distinct persons making this move in the window, interval-filtered: the true count lies in [n_persons, n_persons + manifest.count_interval) (exact when count_interval = 1).';
COMMENT ON COLUMN {build}.flows.n_trajectories IS
    'Trajectories making this move in the window, interval-filtered like n_persons.';
COMMENT ON COLUMN {build}.flows.geom IS 'Line from the centroid of from_cell to that of to_cell.';
