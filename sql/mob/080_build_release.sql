-- Build a MOB release (seed 003) in the build schema, published later by renaming it.
-- objects: one row per published person-object, a fresh random uuid (nothing joins to raw
-- data or to another release); positions: the region of each object at each time point
-- where its person has a position: the least upper bound of its equivalence class (a
-- rectangle of whole grid cells) or, outside every class, what the release's outside_qids
-- rule gives (anonymizers/families/mob/outside_qids.py). With presence 'hidden' every
-- object also has a row at every other time point of the grid: the withheld region (the
-- box_* cell ranges), generated here from the time grid, so that when a person was
-- observed is not published; with 'published' it has none there. Rows in random order.
-- Inputs: {work}.mob_published (object_index, blank), {work}.mob_regions (object_index,
-- t_index, x0, y0, x1, y1: inclusive cell ranges), {work}.mob_time_points (t_index, t).
-- Params: srid, cell_size, presence ('hidden' or 'published'), box_x0, box_y0, box_x1,
-- box_y1 (inclusive cell ranges of the withheld region). Every table has a single-column
-- integer key fid (a row number, the feature id GIS tools use) and keeps its ids as unique
-- attributes. Identifiers: work, build.
DROP SCHEMA IF EXISTS {build} CASCADE;
CREATE SCHEMA {build};

DROP TABLE IF EXISTS {work}.mob_object_ids;
CREATE TABLE {work}.mob_object_ids AS
SELECT object_index, gen_random_uuid() AS object_id FROM {work}.mob_published;

CREATE TABLE {build}.objects (
    object_id uuid NOT NULL UNIQUE,
    fid       integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
INSERT INTO {build}.objects (object_id)
SELECT object_id FROM {work}.mob_object_ids ORDER BY random();

CREATE TABLE {build}.positions (
    object_id uuid NOT NULL REFERENCES {build}.objects (object_id),
    t         timestamptz NOT NULL,
    geom      geometry(Polygon, %(srid)s) NOT NULL,
    UNIQUE (object_id, t),
    fid       integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
INSERT INTO {build}.positions (object_id, t, geom)
SELECT o.object_id, tp.t,
       ST_MakeEnvelope(r.x0 * %(cell_size)s::float8, r.y0 * %(cell_size)s::float8,
                       (r.x1 + 1) * %(cell_size)s::float8, (r.y1 + 1) * %(cell_size)s::float8,
                       %(srid)s)
FROM (SELECT object_index, t_index, x0, y0, x1, y1
      FROM {work}.mob_regions
      UNION ALL
      SELECT o.object_index, tp.t_index, %(box_x0)s, %(box_y0)s, %(box_x1)s, %(box_y1)s
      FROM {work}.mob_published AS o
      CROSS JOIN {work}.mob_time_points AS tp
      WHERE %(presence)s = 'hidden'
        AND NOT EXISTS (SELECT 1 FROM {work}.mob_regions AS held
                        WHERE held.object_index = o.object_index
                          AND held.t_index = tp.t_index)) AS r
JOIN {work}.mob_object_ids AS o USING (object_index)
JOIN {work}.mob_time_points AS tp USING (t_index)
ORDER BY random();
CREATE INDEX ON {build}.positions USING gist (geom);
CREATE INDEX ON {build}.positions (t);
ANALYZE {build}.positions;

COMMENT ON TABLE {build}.objects IS
    'One row per published moving object (a person of the window): a fresh random id, not a person''s id, not shared with any other release. Persons who could not be hidden among k are not published.';
COMMENT ON COLUMN {build}.objects.fid IS 'Row number (the feature id GIS tools use); join on object_id.';
COMMENT ON COLUMN {build}.objects.object_id IS 'Random id of the object, new in every release.';
COMMENT ON TABLE {build}.positions IS
    'Where each object was at each time point of the release''s grid (manifest.parameters: interval seconds from window_start): a rectangle of whole grid cells (cell_size metres, anchored at the CRS origin). At the times an attacker may know (quasi-identifiers), the object shares its rectangle with at least k - 1 others so that the attack graph is k-anonymous and symmetric (seed 003 Definition 3); at other times it is what manifest.parameters.outside_qids says: the smallest rectangle of cells holding the cells of at least k objects of its cover group, its hiding set and every object it shares a rectangle with at a quasi-identifier time (hiding_set; the area of use where fewer are present; at quasi-identifier times the shared rectangle is widened to hold the present cover group too), a cell of the coarse lattice (coarse, coarse_cell_size), the CRS''s area of use, that is no location (withheld), or its own cell (cell). Where the person had no position (manifest.parameters: position_scope, position_lookback), the object has the area of use as its region when manifest.parameters.presence is hidden (every object has a row at every time point: when a person was observed is not published) and no row when it is published.';
COMMENT ON COLUMN {build}.positions.fid IS
    'Row number (the feature id GIS tools use); (object_id, t) is the key of a position.';
COMMENT ON COLUMN {build}.positions.object_id IS 'The object (objects.object_id).';
COMMENT ON COLUMN {build}.positions.t IS 'A time point of the release: window_start + i * interval; the position is the last fix at or before it (no interpolation), of the trajectory running then or of the person (manifest.parameters.position_scope), at most position_lookback seconds old when that is set.';
COMMENT ON COLUMN {build}.positions.geom IS 'The published region, a rectangle of whole grid cells: at a quasi-identifier time the smallest one holding the cells of its equivalence class at t (least upper bound, seed 003 Algorithm 4); at other times as manifest.parameters.outside_qids says.';
