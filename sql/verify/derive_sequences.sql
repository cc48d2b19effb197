-- The verifier's own generalization of the raw points, from the published cells only:
-- each point of the window goes to the published cell containing it (the smallest id if
-- it lies on a shared edge), or to -1 when no published cell contains it; consecutive
-- repeats are collapsed. Reads raw.points and the release under test, nothing else.
-- Params: dataset_id, window_start, window_end, srid. Identifiers: release.
WITH located AS (
    SELECT p.traj_id, p.user_id, p.t,
           coalesce((SELECT min(c.cell_id)
                     FROM {release}.cells AS c
                     WHERE ST_Intersects(c.geom, ST_Transform(p.geom, %(srid)s))), -1) AS cell
    FROM raw.points AS p
    WHERE p.dataset_id = %(dataset_id)s
      AND p.t >= %(window_start)s
      AND p.t < %(window_end)s
), marked AS (
    SELECT traj_id, user_id, t, cell,
           cell IS DISTINCT FROM lag(cell) OVER (PARTITION BY traj_id ORDER BY t) AS starts
    FROM located
)
SELECT traj_id, min(user_id) AS user_id, array_agg(cell ORDER BY t) AS cells
FROM marked
WHERE starts
GROUP BY traj_id;
