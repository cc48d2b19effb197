-- The window's fixes in trajectory and time order, for the cells progressive
-- generalization keeps in memory (fix_cells.py): the trajectory only to tell where one
-- ends, the person, the position. Identifiers: work.
COPY (
    SELECT traj_id, user_id, ST_X(geom) AS x, ST_Y(geom) AS y
    FROM {work}.points
    ORDER BY traj_id, t
) TO STDOUT (FORMAT csv)
