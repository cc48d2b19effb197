-- The moves between cells (Algorithm 3, lines 1-4) of the trajectories in {memberships}:
-- every membership ({work}.memberships, after a full membership) or those of the
-- trajectories an update changed ({work}.changed_memberships, 142_changed_trajectories.sql).
-- A move is a membership whose cell differs from the trajectory's previous one, i.e. the
-- pair of consecutive visits once repeats are collapsed (gaps, NULL cells, are not
-- memberships), so the visits themselves are not built in the loop (../050_visits.sql
-- builds them once the cells are final). As (traj_no, person_no, from_cell, to_cell) for
-- moves.py. Identifiers: work, memberships.
COPY (
    SELECT n.traj_no, n.person_no, m.from_cell, m.to_cell
    FROM (
        SELECT traj_id, cell_id AS to_cell,
               lag(cell_id) OVER (PARTITION BY traj_id ORDER BY t, cell_id) AS from_cell
        FROM {memberships}
    ) AS m
    JOIN {work}.trajectory_numbers AS n USING (traj_id)
    WHERE m.from_cell <> m.to_cell
) TO STDOUT (FORMAT csv)
