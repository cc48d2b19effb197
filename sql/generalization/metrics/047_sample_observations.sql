-- What the linking attack observes of the sampled trajectories (by number,
-- metrics_trajectories of 035_trajectory_numbers.sql): the published cell id of each of
-- their first %(first)s fixes in time order (empty when the fix's cell is not published).
-- {fixes} holds the fixes' cells (traj_id, t, cell_id): 038_voronoi_fix_cells.sql's view
-- (Voronoi methods: their memberships also hold crossed cells; each sampled fix is looked
-- up in the cells) or {work}.memberships (grid: fixes only, no index). Its rows of the
-- sampled trajectories are picked first (one scan, a hash of the sample's ids), so no
-- hash table over every fix is built to join them.
-- Params: chosen (integer[], trajectory numbers), first (integer).
-- Identifiers: work, fixes (schema, table).
COPY (
    WITH chosen AS MATERIALIZED (
        SELECT traj_id, traj_no FROM metrics_trajectories
        WHERE traj_no = ANY(%(chosen)s::integer[])
    ), sampled_cells AS MATERIALIZED (
        SELECT f.traj_id, f.t, f.cell_id
        FROM {fixes} AS f
        WHERE f.traj_id IN (SELECT traj_id FROM chosen)
    ), observed AS (
        SELECT n.traj_no, p.t, m.release_cell_id,
               row_number() OVER (PARTITION BY n.traj_no ORDER BY p.t) AS nth
        FROM chosen AS n
        JOIN {work}.points AS p USING (traj_id)
        LEFT JOIN sampled_cells AS f USING (traj_id, t)
        LEFT JOIN {work}.cell_map AS m ON m.cell_id = f.cell_id
    )
    SELECT traj_no, release_cell_id
    FROM observed
    WHERE nth <= %(first)s::integer
    ORDER BY traj_no, t
) TO STDOUT (FORMAT csv)
