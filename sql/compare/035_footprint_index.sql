-- anonymizers compare: index the footprint of the release being measured (the temporary
-- table compare_footprint, made from the family's Family.footprint query). span is each
-- location as a space-time box (the diagonal of its bounding box, time as seconds since
-- the window start; a location without time spans the whole window), indexed n-D so that
-- a fix or query finds only the locations of its place *and* time: with a 2-D index, a
-- fix of a T-Drive day probed 4,000 MOB regions of other times at its place (27 ms a fix).
-- No 2-D index on geom: the planner would AND it with this one, at 13 ms a fix.
-- x0, y0, x1, y1 are the location's bounds and is_box says whether it is its own bounding
-- box (a rectangle or a point: MOB's and the clustering family's regions, the grid's cells):
-- a range query (a box) then meets it, or covers it, exactly when the bounds say so, with
-- no geometry predicate. A T-Drive-like MOB release has ~130,000 large regions, and every
-- whole-window query meets most of them: ST_Intersects on each took ~1 s a query.
-- Params: window_start, window_seconds.
ALTER TABLE compare_footprint ADD COLUMN span geometry, ADD COLUMN x0 float8,
    ADD COLUMN y0 float8, ADD COLUMN x1 float8, ADD COLUMN y1 float8, ADD COLUMN is_box boolean;
UPDATE compare_footprint
SET x0 = ST_XMin(geom), y0 = ST_YMin(geom), x1 = ST_XMax(geom), y1 = ST_YMax(geom),
    is_box = ST_Equals(geom, ST_Envelope(geom)) AND NOT ST_IsEmpty(geom),
    span = ST_MakeLine(
    ST_MakePoint(ST_XMin(geom), ST_YMin(geom),
                 coalesce(extract(epoch FROM t_start - %(window_start)s::timestamptz), -1)),
    ST_MakePoint(ST_XMax(geom), ST_YMax(geom),
                 coalesce(extract(epoch FROM t_end - %(window_start)s::timestamptz),
                          %(window_seconds)s::float8 + 1)));
CREATE INDEX ON compare_footprint USING gist (span gist_geometry_ops_nd);
ANALYZE compare_footprint;
