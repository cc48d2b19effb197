-- MOB family, preparation 2/3: one moving object per person, and its grid cell at each time
-- point (Yarovoy et al. 2009, §3: a MOD is a table of objects by time points, a position is
-- a grid cell; §6.1: constant sampling rate, no interpolation, a missing point is the last
-- position observed).
--
-- The grid is metric, anchored at the CRS origin: cx = floor(x / cell_size), cy likewise,
-- (x, y) the fix projected to srid. Only fixes with window_start <= t < window_end inside
-- the CRS's area of use (lon/lat bounds) are used; a trajectory runs from its first to its
-- last such fix. The position of a person at t_i is the last fix at or before t_i of a
-- trajectory running at t_i; of several running trajectories, the latest such fix (ties:
-- the larger traj_id in byte order); none when no trajectory runs then (no carrying
-- across the gap between two trajectories).
-- That is the default position rule (position_scope 'trajectory', position_lookback
-- NULL). With position_scope 'person' a fix lasts until the person's next fix, of any
-- trajectory, and the person's last fix of the window until the window's end; with
-- position_lookback L (seconds) a fix is nobody's position more than L after its time.
-- The rule is a release parameter, recorded in the manifest: the verifier re-derives
-- positions with the same rule (sql/mob/verify/person_cells.sql).
--
-- Set-based, no join with the time points: the fixes of a trajectory split its span into
-- [t, t_next) pieces, so each fix is the position at the time points
-- ceil((t - start) / interval) .. ceil((t_next - start) / interval) - 1, the trajectory's
-- last fix at the one time point equal to it, if any. A fix followed by the next one
-- before any time point covers none. Seconds are numeric (exact microseconds).
--
-- mob_objects numbers the persons with at least one position 0..n-1 in the order of
-- md5(window start in epoch seconds || ':' || user_id): an order that follows neither the
-- ids nor the data, fixed for a window (a re-run numbers alike). The numbers are internal:
-- a release draws fresh random ids.
-- Re-running replaces the tables (tasks are idempotent).
-- Params: dataset_id, window_start, window_end (half-open), srid, lon_min, lon_max, lat_min,
-- lat_max, cell_size (metres, > 0), interval_s (seconds, > 0), position_scope ('trajectory'
-- or 'person'), position_lookback_s (seconds > 0, or NULL: no limit).
-- Identifiers: work (the run's work schema).
DROP TABLE IF EXISTS {work}.mob_cells;
DROP TABLE IF EXISTS {work}.mob_objects;
DROP TABLE IF EXISTS {work}.mob_positions;

-- Scratch, by user_id (the objects are numbered from it), dropped below. Not UNLOGGED:
-- QID generation runs this in pg_temp, which holds temporary tables only.
CREATE TABLE {work}.mob_positions AS
WITH fixes AS (
    SELECT p.user_id,
           p.traj_id,
           p.t,
           ST_Transform(p.geom, %(srid)s) AS xy,
           extract(epoch FROM p.t - %(window_start)s::timestamptz) AS s,
           -- scope 'person': one partition per person (the traj_id term is NULL); ties in
           -- t go to the larger traj_id, as in DISTINCT ON below
           extract(epoch FROM lead(p.t) OVER (
               PARTITION BY p.user_id,
                            CASE WHEN %(position_scope)s = 'trajectory' THEN p.traj_id END
               ORDER BY p.t, p.traj_id COLLATE "C")
                              - %(window_start)s::timestamptz) AS s_next
    FROM raw.points AS p
    WHERE p.dataset_id = %(dataset_id)s
      AND p.t >= %(window_start)s::timestamptz
      AND p.t < %(window_end)s::timestamptz
      AND p.lon BETWEEN %(lon_min)s AND %(lon_max)s
      AND p.lat BETWEEN %(lat_min)s AND %(lat_max)s
),
pieces AS (
    SELECT user_id,
           traj_id,
           t,
           floor(ST_X(xy) / %(cell_size)s)::integer AS cx,
           floor(ST_Y(xy) / %(cell_size)s)::integer AS cy,
           ceil(s / %(interval_s)s)::integer AS first_index,
           -- LEAST ignores a NULL lookback (no limit)
           LEAST(CASE WHEN s_next IS NOT NULL THEN ceil(s_next / %(interval_s)s) - 1
                      WHEN %(position_scope)s = 'person'
                      THEN ceil(extract(epoch FROM %(window_end)s::timestamptz
                                                   - %(window_start)s::timestamptz)
                                / %(interval_s)s) - 1
                      ELSE floor(s / %(interval_s)s) END,
                 floor((s + %(position_lookback_s)s::numeric) / %(interval_s)s))::integer
               AS last_index
    FROM fixes
)
SELECT DISTINCT ON (user_id, t_index)
       user_id, t_index, cx, cy
FROM pieces
CROSS JOIN LATERAL generate_series(first_index, last_index) AS t_index
ORDER BY user_id, t_index, t DESC, traj_id COLLATE "C" DESC;

CREATE TABLE {work}.mob_objects (
    object_index integer PRIMARY KEY,
    user_id      text NOT NULL UNIQUE
);
INSERT INTO {work}.mob_objects (object_index, user_id)
SELECT row_number() OVER (ORDER BY md5(extract(epoch FROM %(window_start)s::timestamptz)::text
                                       || ':' || user_id), user_id COLLATE "C") - 1,
       user_id
FROM (SELECT DISTINCT user_id FROM {work}.mob_positions) AS persons;
ANALYZE {work}.mob_objects;

-- Filled, then keyed: building the index from sorted rows is faster than inserting into it.
CREATE TABLE {work}.mob_cells AS
SELECT o.object_index, p.t_index, p.cx, p.cy
FROM {work}.mob_positions AS p
JOIN {work}.mob_objects AS o USING (user_id)
ORDER BY o.object_index, p.t_index;
ALTER TABLE {work}.mob_cells
    ADD PRIMARY KEY (object_index, t_index),
    ALTER COLUMN cx SET NOT NULL,
    ALTER COLUMN cy SET NOT NULL;
ANALYZE {work}.mob_cells;
DROP TABLE {work}.mob_positions;

SELECT json_build_object('objects', (SELECT count(*) FROM {work}.mob_objects),
                         'cells', (SELECT count(*) FROM {work}.mob_cells)) AS counts;
