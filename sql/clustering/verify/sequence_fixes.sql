-- The raw fixes an aligned (MLA) clustering release is checked against, read by the
-- verifier itself (never from the anonymizer's tables): the release's window
-- (window_start <= t < window_end), inside the CRS's area of use, projected to srid, with
-- a spatial index and one on (trajectory, time) for sequence_support.sql.
-- Params: dataset_id, window_start, window_end, srid, lon_min, lon_max, lat_min, lat_max.
DROP TABLE IF EXISTS pg_temp.ml_verify_fixes;
CREATE TEMP TABLE ml_verify_fixes ON COMMIT DROP AS
SELECT traj_id AS traj, user_id AS person, t, xy, ST_X(xy) AS x, ST_Y(xy) AS y
FROM (SELECT traj_id, user_id, t, ST_Transform(geom, %(srid)s) AS xy
      FROM raw.points
      WHERE dataset_id = %(dataset_id)s
        AND t >= %(window_start)s::timestamptz AND t < %(window_end)s::timestamptz
        AND lon BETWEEN %(lon_min)s AND %(lon_max)s
        AND lat BETWEEN %(lat_min)s AND %(lat_max)s) AS window_fixes;
CREATE INDEX ON ml_verify_fixes USING gist (xy);
CREATE INDEX ON ml_verify_fixes (traj, t);
CREATE INDEX ON ml_verify_fixes (t);
ANALYZE ml_verify_fixes;
