-- Trajectory groups (seed 004): the visited places in byte order, so that the n-th is the
-- place of code n in 030_read_visits.sql. Identifiers: work.
SELECT place_id
FROM (SELECT DISTINCT place_id FROM {work}.tg_visits) AS p
ORDER BY place_id COLLATE "C"
