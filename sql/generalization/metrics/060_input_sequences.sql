-- Each input trajectory's generalized sequence (work.visits) in published cell ids, by
-- trajectory number (metrics_trajectories of 035_trajectory_numbers.sql); visits of
-- unpublished cells are left out (the attacker can only see published cells).
-- Identifiers: work.
SELECT n.traj_no,
       coalesce(array_agg(m.release_cell_id ORDER BY v.visit_no)
                    FILTER (WHERE m.release_cell_id IS NOT NULL), '{{}}') AS cells
FROM {work}.visits AS v
JOIN metrics_trajectories AS n USING (traj_id)
LEFT JOIN {work}.cell_map AS m USING (cell_id)
GROUP BY n.traj_no;
