-- Generalized trajectories: each trajectory's sequence of visited cells with entry and
-- exit times, consecutive repeats collapsed (seed 000, Definition 3).
-- Input {work}.memberships(traj_id, user_id, t, cell_id). Identifiers: work.
DROP TABLE IF EXISTS {work}.visits;
CREATE TABLE {work}.visits AS
WITH marked AS (
    SELECT traj_id, user_id, t, cell_id,
           (cell_id IS DISTINCT FROM lag(cell_id) OVER w)::integer AS starts_visit
    FROM {work}.memberships
    WINDOW w AS (PARTITION BY traj_id ORDER BY t)
), numbered AS (
    SELECT *, sum(starts_visit) OVER (PARTITION BY traj_id ORDER BY t) AS visit_no
    FROM marked
)
SELECT traj_id,
       min(user_id) AS user_id,
       visit_no::integer AS visit_no,
       min(cell_id) AS cell_id,
       min(t) AS t_enter,
       max(t) AS t_exit,
       count(*)::integer AS n_points
FROM numbered
GROUP BY traj_id, visit_no;
CREATE INDEX ON {work}.visits (traj_id, visit_no);
ANALYZE {work}.visits;
