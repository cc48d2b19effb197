-- Fill a clustering release (seed 002 Algorithm 3, TGeneralizing) in the build schema
-- that 075_release_tables.sql made; it is published later by renaming it.
-- The generalized trajectory of a group is, at each time point of its slice, the minimum
-- bounding rectangle of its members' synchronized positions (ST_Extent), snapped outward
-- to the lattice of snap metres (privacy rule 2: no published edge is a person's
-- coordinate); a rectangle is at least one lattice step wide and high. A group is
-- published only with at least k distinct persons (the clustering makes k to 2k - 1; the
-- check here is the anonymizer's own floor, the verifier's is independent). Group ids are
-- fresh and in random order; rows in random order.
-- Inputs: {work}.cl_groups (piece_id, group_index), {work}.cl_pieces, {work}.cl_positions.
-- Params: srid, snap (metres), k, count_interval, window_start, slice_seconds, interval_s.
-- Identifiers: work, build.
DROP TABLE IF EXISTS {work}.cl_group_sizes;
CREATE TABLE {work}.cl_group_sizes AS
SELECT g.group_index,
       count(DISTINCT p.person_index) AS n_persons,
       min(p.slice) AS slice,
       row_number() OVER (ORDER BY random())::integer AS group_id
FROM {work}.cl_groups AS g JOIN {work}.cl_pieces AS p USING (piece_id)
GROUP BY g.group_index
HAVING count(DISTINCT p.person_index) >= %(k)s;

DROP TABLE IF EXISTS {work}.cl_regions;
CREATE TABLE {work}.cl_regions AS
SELECT s.group_id, q.seq, s.slice, ST_Extent(ST_MakePoint(q.x, q.y)) AS box
FROM {work}.cl_group_sizes AS s
JOIN {work}.cl_groups AS g USING (group_index)
JOIN {work}.cl_positions AS q USING (piece_id)
GROUP BY s.group_id, q.seq, s.slice;

INSERT INTO {build}.groups (group_id, n_persons)
SELECT group_id, catalog.interval_count(n_persons, %(k)s, %(count_interval)s)
FROM {work}.cl_group_sizes
ORDER BY random();

INSERT INTO {build}.group_regions (group_id, seq, t_start, t_end, geom)
SELECT r.group_id, r.seq, at.t, at.t,
       ST_MakeEnvelope(x0 * %(snap)s::float8, y0 * %(snap)s::float8,
                       greatest(x1, x0 + 1) * %(snap)s::float8,
                       greatest(y1, y0 + 1) * %(snap)s::float8, %(srid)s)
FROM {work}.cl_regions AS r
CROSS JOIN LATERAL (
    SELECT floor(ST_XMin(r.box) / %(snap)s::float8) AS x0,
           floor(ST_YMin(r.box) / %(snap)s::float8) AS y0,
           ceil(ST_XMax(r.box) / %(snap)s::float8) AS x1,
           ceil(ST_YMax(r.box) / %(snap)s::float8) AS y1
) AS lattice
CROSS JOIN LATERAL (
    SELECT %(window_start)s::timestamptz
           + make_interval(secs => r.slice * %(slice_seconds)s + r.seq * %(interval_s)s) AS t
) AS at
ORDER BY random();
CREATE INDEX ON {build}.group_regions USING gist (geom);
CREATE INDEX ON {build}.group_regions (t_start);
ANALYZE {build}.group_regions;

COMMENT ON TABLE {build}.groups IS
    'One row per published group: at least k distinct persons whose trajectories were synchronized on the same time slice and clustered together by distance and direction similarity (seed 002, TCAA). The ids are fresh in every release.';
COMMENT ON COLUMN {build}.groups.n_persons IS 'Distinct persons of the group, through the interval filter (seed 004 §4.2): the lower end of an interval of count_interval persons starting at k.';
COMMENT ON TABLE {build}.group_regions IS
    'The generalized trajectory of each group: at each synchronized time point of its slice, the smallest rectangle holding the interpolated positions of all its members, snapped outward to the snap lattice (manifest.parameters). Every rectangle holds at least k distinct persons at that time.';
COMMENT ON COLUMN {build}.group_regions.seq IS 'Order of the time point within the group''s trajectory, from 0.';
COMMENT ON COLUMN {build}.group_regions.t_start IS 'The synchronized time point: window_start + slice * slice_seconds + seq * interval.';
COMMENT ON COLUMN {build}.group_regions.t_end IS 'Equal to t_start (TCAA publishes instants).';
COMMENT ON COLUMN {build}.group_regions.geom IS 'The group''s rectangle at that time, in the release''s metric CRS.';
