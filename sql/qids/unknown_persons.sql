-- Persons with QIDs in a dataset who have no fix in it (a QID of nobody in the data cannot
-- be linked to anything: the file names the wrong persons, or the wrong dataset). One scan
-- of the dataset's points (no index on user_id: raw.points is read by time and trajectory).
-- Returns their number and the first few in byte order.
-- Params: dataset_id, examples (how many to name).
WITH unknown AS (
    SELECT DISTINCT q.user_id
    FROM raw.qids AS q
    WHERE q.dataset_id = %(dataset_id)s
      AND NOT EXISTS (SELECT FROM raw.points AS p
                      WHERE p.dataset_id = %(dataset_id)s AND p.user_id = q.user_id)
)
SELECT (SELECT count(*) FROM unknown) AS n_unknown,
       ARRAY(SELECT user_id FROM unknown ORDER BY user_id COLLATE "C"
             LIMIT %(examples)s) AS examples;
