-- How many values of each published column (published_id_values.sql) equal a raw traj_id
-- or user_id of the dataset. The dataset's ids are read once for all columns and probe a
-- hash of the published values: the published side is the small one (hashing the raw ids
-- of a 5M-fix city once per column took 13 s a column). A value that is the name of one
-- of the dataset's places (raw.places: stations of a place-sequence dataset,
-- published by name by seed 004's groups) is not counted: a place may be named like a
-- person (both numbers). Returns column_no, leaked. Params: dataset_id.
ANALYZE pg_temp.published_id_values;  -- so the planner sees which side is small
WITH raw_ids AS (  -- both ids of every fix, in one scan (raw.persons may be empty)
    SELECT i.id
    FROM raw.points AS p
    CROSS JOIN LATERAL (VALUES (p.traj_id), (p.user_id)) AS i (id)
    WHERE p.dataset_id = %(dataset_id)s
)
SELECT v.column_no, count(DISTINCT v.value) AS leaked
FROM raw_ids AS r
JOIN pg_temp.published_id_values AS v ON v.value = r.id
WHERE NOT EXISTS (SELECT 1 FROM raw.places AS pl
                  WHERE pl.dataset_id = %(dataset_id)s AND pl.place = v.value)
GROUP BY v.column_no;
DROP TABLE pg_temp.published_id_values;
