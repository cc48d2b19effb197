-- Fill an MLA release (seed 001) in the build schema that 075_release_tables.sql made.
-- Each published cluster becomes a group; its aligned sequence of regions becomes its
-- generalized trajectory: region seq is the DGH node of the cluster's points in column
-- seq (an epsilon-lattice rectangle, a [t_start, t_end) interval of time bins from the
-- window start). Only clusters of at least k persons matching every region in order are
-- built (the anonymizer's floor; the verifier's is independent). Group ids are fresh and in
-- random order; rows in random order.
-- Inputs: {work}.ml_clusters, {work}.ml_regions. Params: srid, k, count_interval,
-- window_start. Identifiers: work, build.
DROP TABLE IF EXISTS {work}.ml_group_ids;
CREATE TABLE {work}.ml_group_ids AS
SELECT c.cluster_index, c.matched_persons,
       row_number() OVER (ORDER BY random())::integer AS group_id
FROM {work}.ml_clusters AS c
WHERE c.matched_persons >= %(k)s
  AND EXISTS (SELECT 1 FROM {work}.ml_regions AS r WHERE r.cluster_index = c.cluster_index);

INSERT INTO {build}.groups (group_id, n_persons)
SELECT group_id, catalog.interval_count(matched_persons, %(k)s, %(count_interval)s)
FROM {work}.ml_group_ids
ORDER BY random();

INSERT INTO {build}.group_regions (group_id, seq, t_start, t_end, geom)
SELECT g.group_id, r.seq,
       %(window_start)s::timestamptz + make_interval(secs => r.t_lo),
       %(window_start)s::timestamptz + make_interval(secs => r.t_hi),
       ST_MakeEnvelope(r.x_lo, r.y_lo, r.x_hi, r.y_hi, %(srid)s)
FROM {work}.ml_regions AS r JOIN {work}.ml_group_ids AS g USING (cluster_index)
ORDER BY random();
CREATE INDEX ON {build}.group_regions USING gist (geom);
CREATE INDEX ON {build}.group_regions (t_start);
ANALYZE {build}.group_regions;

COMMENT ON TABLE {build}.groups IS
    'One row per published group: a cluster of trajectories of at least k distinct persons (seed 001, MLA) whose trajectories all pass, in order, through every region of the group''s generalized trajectory. The ids are fresh in every release.';
COMMENT ON COLUMN {build}.groups.n_persons IS 'Distinct persons of the group with a fix in every one of its regions, in order, through the interval filter (seed 004 §4.2): the lower end of an interval of count_interval persons starting at k.';
COMMENT ON TABLE {build}.group_regions IS
    'The generalized trajectory of each group (seed 001: its members aligned, each column of the alignment generalized to the node of the x, y and time hierarchies holding its points). Every region holds fixes of at least k distinct persons; at least k persons have fixes in all of a group''s regions in seq order. Points aligned with gaps, and regions of fewer than k persons, are suppressed.';
COMMENT ON COLUMN {build}.group_regions.seq IS 'Order of the region within the group''s trajectory, from 0.';
COMMENT ON COLUMN {build}.group_regions.t_start IS 'Start of the region''s time interval [t_start, t_end): window_start + a whole number of time_bin seconds (manifest.parameters).';
COMMENT ON COLUMN {build}.group_regions.t_end IS 'End of the region''s time interval, excluded.';
COMMENT ON COLUMN {build}.group_regions.geom IS 'The region: a rectangle of epsilon x epsilon cells (manifest.parameters) in the release''s metric CRS, a node of a fixed dyadic lattice.';
