-- Trajectory groups (seed 004): how many persons of a dataset carry a number for every
-- attribute of the demographic grid, before the run decides on demographic classes.
-- An attribute is a raw.persons column (age, income) or a key of its attributes jsonb;
-- a column wins over a key of the same name (as the demographic_classes step reads them).
-- Params: dataset_id, attributes (text[]: the grid's attribute names).
SELECT count(*) AS persons
FROM raw.persons AS p
WHERE p.dataset_id = %(dataset_id)s
  AND NOT EXISTS (
      SELECT 1
      FROM unnest(%(attributes)s::text[]) AS a (name)
      WHERE jsonb_typeof((coalesce(p.attributes, jsonb_build_object()) || jsonb_strip_nulls(to_jsonb(p)))
                         -> a.name) IS DISTINCT FROM 'number');
