-- A new dataset id from raw.datasets' own sequence, drawn before the dataset row exists
-- (the load's tables are named after it). Params: none.
SELECT nextval(pg_get_serial_sequence('raw.datasets', 'dataset_id')) AS dataset_id;
