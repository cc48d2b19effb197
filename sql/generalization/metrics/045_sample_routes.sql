-- The fixes of the trajectories sampled for cluster preservation (by number,
-- metrics_trajectories of 035_trajectory_numbers.sql) in time order: their original routes.
-- Index scans of {work}.points (traj_id, t) only: the cost grows with the sample, not with
-- the window. Params: chosen (integer[], trajectory numbers). Identifiers: work.
COPY (
    SELECT n.traj_no, ST_X(p.geom), ST_Y(p.geom)
    FROM metrics_trajectories AS n
    JOIN {work}.points AS p USING (traj_id)
    WHERE n.traj_no = ANY(%(chosen)s::integer[])
    ORDER BY n.traj_no, p.t
) TO STDOUT (FORMAT csv)
