-- How many values of one column equal a raw traj_id or user_id of the dataset.
-- Text arrays are compared element-wise (integer columns, e.g. cell ids, are not ids of
-- persons or trajectories and are not scanned). A value that is the name of one of the
-- dataset's places (raw.places: stations of a place-sequence dataset, published by name
-- by seed 004's groups) is not counted: a place may be named like a person (both numbers).
-- Params: dataset_id. Identifiers: source (schema, table), column.
WITH raw_ids AS (
    SELECT traj_id AS id FROM raw.points WHERE dataset_id = %(dataset_id)s
    UNION
    SELECT user_id FROM raw.points WHERE dataset_id = %(dataset_id)s
), published AS (
    SELECT DISTINCT unnest(
        CASE WHEN left(x.{column}::text, 1) = '{{'
             THEN string_to_array(trim(both '{{}}' from x.{column}::text), ',')
             ELSE ARRAY[x.{column}::text] END) AS value
    FROM {source} AS x
)
SELECT count(*) FROM published JOIN raw_ids ON raw_ids.id = published.value
WHERE NOT EXISTS (SELECT 1 FROM raw.places AS pl
                  WHERE pl.dataset_id = %(dataset_id)s AND pl.place = published.value);
