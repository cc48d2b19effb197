-- The raw points of the release window, projected to the release's CRS by PostGIS (the
-- same projection the anonymizer used), in trajectory order. Which published cell holds
-- each point is decided by the verifier itself (anonymizers/verifiers/generalization.py).
-- Read into Arrow by anonymizers/db/arrow_reads.py (the verifier's own connection, in the
-- snapshot of its transaction).
-- Fixes outside the CRS's area of use cannot be projected and cannot lie in a cell.
-- Reads raw.points only. Params: dataset_id, window_start, window_end, srid, lon_min,
-- lon_max, lat_min, lat_max.
SELECT traj_id, user_id, ST_X(g) AS x, ST_Y(g) AS y
FROM (SELECT traj_id, user_id, t, ST_Transform(geom, %(srid)s) AS g
      FROM raw.points
      WHERE dataset_id = %(dataset_id)s
        AND t >= %(window_start)s
        AND t < %(window_end)s
        AND lon BETWEEN %(lon_min)s AND %(lon_max)s
        AND lat BETWEEN %(lat_min)s AND %(lat_max)s) AS p
ORDER BY traj_id, t
