-- The id of the loaded dataset of a name (no row: none is loaded). Params: name.
SELECT dataset_id FROM raw.datasets WHERE name = %(name)s;
