-- Trajectory groups (seed 004): the window's place sequences for the anonymizer, one row
-- per visit in trajectory and visit order, each place as its code: its rank among the
-- visited places in byte order, the order 031_read_visited_places.sql lists them in. No
-- text per visit reaches Python (at 25M fixes, millions of visits held as strings).
-- Identifiers: work.
WITH visited AS (
    SELECT place_id, (row_number() OVER (ORDER BY place_id COLLATE "C") - 1)::integer AS code
    FROM (SELECT DISTINCT place_id FROM {work}.tg_visits) AS p
)
SELECT v.traj_index, v.person_index, visited.code AS place_code
FROM {work}.tg_visits AS v
JOIN visited USING (place_id)
ORDER BY v.traj_index, v.seq
