-- Counts of a MOB run for its metrics (interval-filtered by the writer's last pass).
-- Identifiers: work.
SELECT (SELECT count(*) FROM {work}.mob_objects) AS objects,
       (SELECT count(*) FROM {work}.mob_published) AS objects_published,
       (SELECT count(*) FROM {work}.mob_published WHERE blank) AS objects_blank,
       (SELECT count(*) FROM {work}.mob_time_points) AS time_points,
       (SELECT count(DISTINCT object_index) FROM {work}.mob_qids) AS objects_with_qid,
       (SELECT count(*) FROM {work}.mob_qids) AS qid_time_points;
