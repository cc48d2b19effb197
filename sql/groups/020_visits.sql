-- Trajectory groups (seed 004): the window's trajectories as sequences of places. A visit
-- is a maximal run of consecutive fixes of a trajectory in one place (a station is visited
-- once per stop, a cell once per pass), so a sequence never repeats a place twice in a row.
-- traj_index and person_index number trajectories and persons 0..n-1 in an order that
-- follows neither the ids nor the data (md5 salted by the window start), fixed for a window;
-- tg_trajectories maps them back to raw ids (private, read by the verifier's assignment
-- check). seq is the visit's position in its trajectory, from 0.
-- Params: window_start. Identifiers: work.
DROP TABLE IF EXISTS {work}.tg_trajectories, {work}.tg_visits;
CREATE TABLE {work}.tg_trajectories AS
WITH ids AS (SELECT DISTINCT traj_id, user_id FROM {work}.tg_fix_places),
salt AS (SELECT extract(epoch FROM %(window_start)s::timestamptz)::text || ':' AS prefix)
SELECT (dense_rank() OVER (ORDER BY md5(salt.prefix || i.traj_id), i.traj_id) - 1)::integer
           AS traj_index,
       (dense_rank() OVER (ORDER BY md5(salt.prefix || i.user_id), i.user_id) - 1)::integer
           AS person_index,
       i.traj_id, i.user_id
FROM ids AS i CROSS JOIN salt;
ALTER TABLE {work}.tg_trajectories ADD PRIMARY KEY (traj_index);
CREATE UNIQUE INDEX ON {work}.tg_trajectories (traj_id);

CREATE TABLE {work}.tg_visits AS
SELECT tr.traj_index, tr.person_index,
       (row_number() OVER (PARTITION BY f.traj_id ORDER BY f.t) - 1)::integer AS seq,
       f.place_id
FROM (SELECT traj_id, t, place_id,
             lag(place_id) OVER (PARTITION BY traj_id ORDER BY t) AS previous
      FROM {work}.tg_fix_places) AS f
JOIN {work}.tg_trajectories AS tr USING (traj_id)
WHERE f.previous IS DISTINCT FROM f.place_id;
ALTER TABLE {work}.tg_visits ADD PRIMARY KEY (traj_index, seq);
ANALYZE {work}.tg_visits;
