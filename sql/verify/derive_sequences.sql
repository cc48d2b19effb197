-- The raw points of the release window, projected to the release's CRS by PostGIS (the
-- same projection the anonymizer used), in trajectory order. Which published cell holds
-- each point is decided by the verifier itself (anonymizers/verifiers/generalization.py).
-- Reads raw.points only. Params: dataset_id, window_start, window_end, srid.
COPY (
    SELECT traj_id, user_id, ST_X(g) AS x, ST_Y(g) AS y
    FROM (SELECT traj_id, user_id, t, ST_Transform(geom, %(srid)s) AS g
          FROM raw.points
          WHERE dataset_id = %(dataset_id)s
            AND t >= %(window_start)s
            AND t < %(window_end)s) AS p
    ORDER BY traj_id, t
) TO STDOUT (FORMAT csv)
