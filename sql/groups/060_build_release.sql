-- Trajectory groups (seed 004): fill the build schema from the work tables. Every group,
-- common group and class is published only with at least k distinct persons (the
-- anonymizer's own floor; the verifier's is independent). Counts go through the interval
-- filter (§4.2, eq. 1) as the inclusive pair [n_lo, n_hi]:
--   n_lo = k + I_s * floor((n - k) / I_s), n_hi = n_lo + I_s - 1.
-- A group's count is its trajectories (§4.1: the number the thesis attaches to a group), a
-- class's its individuals. Ids are fresh and in random order in every release; the maps
-- from them to the run's members stay in the work schema (tg_published_*), private, for
-- the verifier's assignment checks. Places: those a published group or common group names.
-- demographic_classes is filled by the step (its columns depend on the attributes).
-- The groups' geometry is drawn from the published places next (061_group_geometry.sql).
-- Params: k, interval_size. Identifiers: work, build.
DROP TABLE IF EXISTS {work}.tg_group_ids, {work}.tg_od_ids, {work}.tg_published_assignment,
    {work}.tg_published_od_members, {work}.tg_published_class_members;
CREATE TABLE {work}.tg_group_ids AS
SELECT group_index, row_number() OVER (ORDER BY random())::integer AS group_id
FROM {work}.tg_groups
WHERE n_persons >= %(k)s;
ALTER TABLE {work}.tg_group_ids ADD PRIMARY KEY (group_index);

CREATE TABLE {work}.tg_od_ids AS
SELECT od.od_index, row_number() OVER (ORDER BY random())::integer AS od_group_id
FROM {work}.tg_od AS od JOIN {work}.tg_group_ids USING (group_index)
WHERE od.n_persons >= %(k)s;

INSERT INTO {build}.groups (group_id, places, length, n_lo, n_hi)
SELECT i.group_id, to_jsonb(s.places), cardinality(s.places), f.n_lo, f.n_lo + %(interval_size)s - 1
FROM {work}.tg_groups AS g
JOIN {work}.tg_group_ids AS i USING (group_index)
CROSS JOIN LATERAL (SELECT array_agg(gp.place_id ORDER BY gp.pos) AS places
                    FROM {work}.tg_group_places AS gp
                    WHERE gp.group_index = g.group_index) AS s
CROSS JOIN LATERAL (SELECT %(k)s + %(interval_size)s
                           * ((g.n_trajectories - %(k)s) / %(interval_size)s) AS n_lo) AS f
ORDER BY random();

INSERT INTO {build}.od_groups (od_group_id, group_id, kind, places, n_lo, n_hi)
SELECT o.od_group_id, i.group_id,
       CASE WHEN od.is_origin THEN 'origin' ELSE 'destination' END, to_jsonb(s.places),
       f.n_lo, f.n_lo + %(interval_size)s - 1
FROM {work}.tg_od AS od
JOIN {work}.tg_od_ids AS o USING (od_index)
JOIN {work}.tg_group_ids AS i USING (group_index)
CROSS JOIN LATERAL (SELECT array_agg(op.place_id ORDER BY op.place_id) AS places
                    FROM {work}.tg_od_places AS op
                    WHERE op.od_index = od.od_index) AS s
CROSS JOIN LATERAL (SELECT %(k)s + %(interval_size)s
                           * ((od.n_trajectories - %(k)s) / %(interval_size)s) AS n_lo) AS f
ORDER BY random();

INSERT INTO {build}.places (place_id, geom)
SELECT p.place_id, p.geom
FROM {work}.tg_places AS p
WHERE p.place_id IN (SELECT jsonb_array_elements_text(places) FROM {build}.groups
                     UNION SELECT jsonb_array_elements_text(places) FROM {build}.od_groups)
ORDER BY random();
CREATE INDEX ON {build}.places USING gist (geom);
CREATE INDEX ON {build}.groups USING gin (places);


CREATE TABLE {work}.tg_published_assignment AS
SELECT i.group_id, tr.traj_id, tr.user_id, a.seq_start, a.seq_stop
FROM {work}.tg_assignment AS a
JOIN {work}.tg_group_ids AS i USING (group_index)
JOIN {work}.tg_trajectories AS tr USING (traj_index);

CREATE TABLE {work}.tg_published_od_members AS
SELECT o.od_group_id, tr.traj_id, tr.user_id
FROM {work}.tg_od_members AS m
JOIN {work}.tg_od_ids AS o USING (od_index)
JOIN {work}.tg_trajectories AS tr USING (traj_index);

CREATE TABLE {work}.tg_published_class_members (
    group_id integer NOT NULL,
    class_id integer NOT NULL,
    user_id  text NOT NULL
);

COMMENT ON TABLE {build}.places IS
    'The places the published groups name (seed 004 §3.2: stations, routes, cells): a public network, published as it is. Point places come from the dataset''s places file; square cells are the fixed grid of cell_size metres (manifest.parameters). In the release''s metric CRS.';
COMMENT ON COLUMN {build}.places.fid IS 'Row number (the feature id GIS tools use); join on place_id.';
COMMENT ON COLUMN {build}.places.geom IS
    'The place: a point (a place of the dataset''s places file) or a polygon (a grid square, a cell of a published release), in the release''s metric CRS.';
COMMENT ON COLUMN {build}.places.place_id IS 'The place''s public name (the places file''s, or ''column:row'' of the grid cell).';
COMMENT ON TABLE {build}.groups IS
    'Trajectory groups (seed 004 §3.2, §4.3): a sequence of places, in the order travelled, that at least k distinct persons travelled as a contiguous part of a trajectory in the window. Ids are fresh in every release.';
COMMENT ON COLUMN {build}.groups.fid IS 'Row number (the feature id GIS tools use); join on group_id.';
COMMENT ON COLUMN {build}.groups.group_id IS 'The group''s id, drawn at random for this release only.';
COMMENT ON COLUMN {build}.groups.places IS
    'The sequence of places (places.place_id), in order, as a JSON array of strings (in SQL: jsonb_array_elements_text(places) WITH ORDINALITY).';
COMMENT ON COLUMN {build}.groups.geom IS
    'The group drawn as a line through the points of its places, in order: each place''s published geometry''s centroid (the point itself for a point place). NULL for a group of one place.';
COMMENT ON COLUMN {build}.groups.length IS 'Number of places in the sequence.';
COMMENT ON COLUMN {build}.groups.n_lo IS 'Interval filter (seed 004 §4.2): the group''s trajectories number between n_lo and n_hi, inclusive; the interval is one of a fixed tiling of size interval_size starting at k.';
COMMENT ON COLUMN {build}.groups.n_hi IS 'Upper end (inclusive) of the interval holding the group''s number of trajectories.';
COMMENT ON TABLE {build}.od_groups IS
    'Common origin and destination groups (seed 004 §4.3.3): of the members of a trajectory group, at least k distinct persons whose whole trajectory started (origin) or ended (destination) at one of these places, a place and its neighbours. A trajectory is in at most one origin and one destination group.';
COMMENT ON COLUMN {build}.od_groups.fid IS 'Row number (the feature id GIS tools use); join on od_group_id.';
COMMENT ON COLUMN {build}.od_groups.od_group_id IS 'The common group''s id, drawn at random for this release only.';
COMMENT ON COLUMN {build}.od_groups.group_id IS 'The trajectory group it belongs to (groups.group_id).';
COMMENT ON COLUMN {build}.od_groups.kind IS 'origin (where the trajectories started) or destination (where they ended).';
COMMENT ON COLUMN {build}.od_groups.places IS
    'The place and its neighbouring places (places.place_id), as a JSON array of strings.';
COMMENT ON COLUMN {build}.od_groups.n_lo IS 'Interval filter of the number of trajectories (as groups.n_lo).';
COMMENT ON COLUMN {build}.od_groups.n_hi IS 'Upper end (inclusive) of the interval holding the number of trajectories.';
COMMENT ON COLUMN {build}.od_groups.geom IS
    'The points of its places (as groups.geom), in the order of places.';
COMMENT ON TABLE {build}.demographic_classes IS
    'Demographic equivalence classes of each group (seed 004 §4.4): boxes over the demographic attributes, each holding at least k distinct persons of the group, with boundaries hidden as §4.4.5 says (moved to the atomic interval around the mean of the k/2 lowest and highest values). Bounds are [lo, hi) per attribute on the atomic grid of manifest.parameters.demographic_grid.';
COMMENT ON COLUMN {build}.demographic_classes.fid IS
    'Row number (the feature id GIS tools use); (group_id, class_id) is the key of a class.';
COMMENT ON COLUMN {build}.demographic_classes.group_id IS 'The trajectory group (groups.group_id).';
COMMENT ON COLUMN {build}.demographic_classes.class_id IS 'The class''s number within its group.';
COMMENT ON COLUMN {build}.demographic_classes.n_hi IS 'Upper end (inclusive) of the interval holding the class''s number of persons.';
COMMENT ON COLUMN {build}.demographic_classes.n_lo IS 'Interval filter of the class''s number of persons (§4.2); as §4.4.5 says, the count is the class''s before its boundaries were hidden.';
