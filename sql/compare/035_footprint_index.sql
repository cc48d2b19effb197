-- anonymizers compare: index the footprint of the release being measured (the temporary
-- table compare_footprint, made from the family's Family.footprint query). span is each
-- location as a space-time box (the diagonal of its bounding box, time as seconds since
-- the window start; a location without time spans the whole window), indexed n-D so that
-- a fix or query finds only the locations of its place *and* time: with a 2-D index, a
-- fix of a T-Drive day probed 4,000 MOB regions of other times at its place (27 ms a fix).
-- No 2-D index on geom: the planner would AND it with this one, at 13 ms a fix.
-- Params: window_start, window_seconds.
ALTER TABLE compare_footprint ADD COLUMN span geometry;
UPDATE compare_footprint
SET span = ST_MakeLine(
    ST_MakePoint(ST_XMin(geom), ST_YMin(geom),
                 coalesce(extract(epoch FROM t_start - %(window_start)s::timestamptz), -1)),
    ST_MakePoint(ST_XMax(geom), ST_YMax(geom),
                 coalesce(extract(epoch FROM t_end - %(window_start)s::timestamptz),
                          %(window_seconds)s::float8 + 1)));
CREATE INDEX ON compare_footprint USING gist (span gist_geometry_ops_nd);
ANALYZE compare_footprint;
