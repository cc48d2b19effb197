-- The moves (as in 141_moves_for_python.sql) of the trajectories in
-- {work}.changed_trajectories (142_changed_trajectories.sql), read through each table's
-- (traj_id, ...) index: a filter on the memberships view would be applied after its
-- UNION ALL. Identifiers: work.
COPY (
    SELECT n.traj_no, n.person_no, m.from_cell, m.to_cell
    FROM (
        SELECT traj_id, cell_id AS to_cell,
               lag(cell_id) OVER (PARTITION BY traj_id ORDER BY t, cell_id) AS from_cell
        FROM (
            SELECT pc.traj_id, pc.t, pc.cell_id
            FROM {work}.changed_trajectories AS c
            JOIN {work}.point_cells AS pc ON pc.traj_id = c.traj_id
            WHERE pc.cell_id IS NOT NULL
            UNION ALL
            SELECT x.traj_id, x.t, x.cell_id
            FROM {work}.changed_trajectories AS c
            JOIN {work}.crossings AS x ON x.traj_id = c.traj_id
        ) AS memberships
    ) AS m
    JOIN {work}.trajectory_numbers AS n USING (traj_id)
    WHERE m.from_cell <> m.to_cell
) TO STDOUT (FORMAT csv)
