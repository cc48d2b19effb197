-- Measures of an MLA release: the run's loss figures (seed 001 eq. 3-6, as the anonymizer
-- computed them over all the window's points, with the counts behind its shares and means:
-- the metrics publish those from filtered counts), the average area of a published region,
-- the published regions, the persons of the window in a published group, and the fixes
-- generalized into a published region.
-- Identifiers: work, build.
SELECT s.loss_bits, s.cluster_loss_bits_sum, s.clusters, s.full_suppression_bits,
       s.bits_per_point, s.merged_clusters, s.suppressed_clusters, s.below_k_trajectories,
       s.clustered_trajectories, s.length_increase_sum, s.published_trajectories,
       s.area_per_location_m2,
       (SELECT avg(ST_Area(geom)) FROM {build}.group_regions) AS area_per_region_m2,
       (SELECT count(*) FROM {build}.group_regions) AS regions,
       (SELECT count(DISTINCT f.person_index)
        FROM {work}.ml_members AS m
        JOIN {work}.ml_group_ids AS g USING (cluster_index)
        JOIN (SELECT DISTINCT traj_index, person_index FROM {work}.cl_fixes) AS f
          USING (traj_index)) AS persons_published,
       (SELECT count(DISTINCT person_index) FROM {work}.cl_fixes) AS persons_in,
       (SELECT coalesce(sum(r.n_points), 0)
        FROM {work}.ml_regions AS r JOIN {work}.ml_group_ids USING (cluster_index))
         AS points_published,
       (SELECT count(*) FROM {work}.cl_fixes) AS points_in
FROM {work}.ml_summary AS s
