-- Each input trajectory's generalized sequence (work.visits) in published cell ids, one
-- row per visit in trajectory number (metrics_trajectories of 035_trajectory_numbers.sql)
-- and visit order; visits of unpublished cells are left out (the attacker can only see
-- published cells), so a trajectory may have no row. Identifiers: work.
COPY (
    SELECT n.traj_no, m.release_cell_id
    FROM {work}.visits AS v
    JOIN metrics_trajectories AS n USING (traj_id)
    JOIN {work}.cell_map AS m USING (cell_id)
    ORDER BY n.traj_no, v.visit_no
) TO STDOUT (FORMAT csv)
