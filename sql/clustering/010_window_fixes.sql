-- Clustering family, preparation: the window's fixes projected to the release's metric CRS,
-- with dense integer keys for the algorithms (seed 002 Algorithm 1 works on (t, x, y)).
-- Only fixes with window_start <= t < window_end inside the CRS's area of use are used;
-- of several fixes of a trajectory at one instant, one is kept (a trajectory is a function
-- of time: interpolation needs strictly increasing times).
-- traj_index numbers the trajectories, person_index the persons, both 0..n-1 in the order
-- of md5(window start || ':' || id): an order that follows neither the ids nor the data,
-- fixed for a window. The keys are internal: nothing of them is published.
-- s is seconds from the window start (exact to the microsecond).
-- Re-running replaces the table (tasks are idempotent).
-- Params: dataset_id, window_start, window_end (half-open), srid, lon_min, lon_max,
-- lat_min, lat_max. Identifiers: work (the run's work schema).
DROP TABLE IF EXISTS {work}.cl_fixes;
CREATE TABLE {work}.cl_fixes AS
WITH fixes AS (
    SELECT DISTINCT ON (p.traj_id, p.t)
           p.traj_id,
           p.user_id,
           extract(epoch FROM p.t - %(window_start)s::timestamptz)::float8 AS s,
           ST_Transform(p.geom, %(srid)s) AS xy
    FROM raw.points AS p
    WHERE p.dataset_id = %(dataset_id)s
      AND p.t >= %(window_start)s::timestamptz
      AND p.t < %(window_end)s::timestamptz
      AND p.lon BETWEEN %(lon_min)s AND %(lon_max)s
      AND p.lat BETWEEN %(lat_min)s AND %(lat_max)s
    ORDER BY p.traj_id, p.t, p.user_id
),
salt AS (SELECT extract(epoch FROM %(window_start)s::timestamptz)::text || ':' AS prefix)
SELECT (dense_rank() OVER (ORDER BY md5(salt.prefix || f.traj_id), f.traj_id) - 1)::integer
           AS traj_index,
       (dense_rank() OVER (ORDER BY md5(salt.prefix || f.user_id), f.user_id) - 1)::integer
           AS person_index,
       f.s,
       ST_X(f.xy) AS x,
       ST_Y(f.xy) AS y
FROM fixes AS f CROSS JOIN salt;
CREATE INDEX ON {work}.cl_fixes (traj_index, s);
ANALYZE {work}.cl_fixes;
