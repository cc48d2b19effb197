-- The fixes of the sampled input trajectories (by number, metrics_trajectories of
-- 035_trajectory_numbers.sql) in time order: position and published cell id (empty when
-- the fix's cell is not published), for the original routes of cluster preservation and
-- the observations of the linking attack. Only the first %(first)s fixes of each when
-- first is not NULL (the attack looks at no more). {fixes} is the table of the fixes'
-- cells: {work}.point_cells (Voronoi methods: memberships there also hold crossed cells) or
-- {work}.memberships (grid: fixes only).
-- Params: chosen (integer[], trajectory numbers), first (integer or NULL).
-- Identifiers: work, fixes (schema, table).
COPY (
    SELECT traj_no, x, y, release_cell_id
    FROM (
        SELECT n.traj_no, p.t, ST_X(p.geom) AS x, ST_Y(p.geom) AS y, m.release_cell_id,
               row_number() OVER (PARTITION BY n.traj_no ORDER BY p.t) AS nth
        FROM metrics_trajectories AS n
        JOIN {work}.points AS p USING (traj_id)
        LEFT JOIN {fixes} AS f USING (traj_id, t)
        LEFT JOIN {work}.cell_map AS m ON m.cell_id = f.cell_id
        WHERE n.traj_no = ANY(%(chosen)s::integer[])
    ) AS fixes
    WHERE %(first)s::integer IS NULL OR nth <= %(first)s::integer
    ORDER BY traj_no, t
) TO STDOUT (FORMAT csv)
