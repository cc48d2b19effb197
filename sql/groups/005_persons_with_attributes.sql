-- Trajectory groups (seed 004): how many persons carry a number for every attribute of the
-- demographic grid, before the run decides on demographic classes: of the dataset
-- (persons) and of those with a fix in the release's window [window_start, window_end)
-- (window_persons; a window can hold none of a dataset's carriers).
-- An attribute is a raw.persons column (age, income) or a key of its attributes jsonb;
-- a column wins over a key of the same name (as the demographic_classes step reads them).
-- Params: dataset_id, attributes (text[]: the grid's attribute names), window_start,
-- window_end.
WITH carriers AS (
    SELECT p.user_id
    FROM raw.persons AS p
    WHERE p.dataset_id = %(dataset_id)s
      AND NOT EXISTS (
          SELECT 1
          FROM unnest(%(attributes)s::text[]) AS a (name)
          WHERE jsonb_typeof((coalesce(p.attributes, jsonb_build_object())
                              || jsonb_strip_nulls(to_jsonb(p))) -> a.name)
                IS DISTINCT FROM 'number')
)
SELECT (SELECT count(*) FROM carriers) AS persons,
       (SELECT count(*) FROM carriers
        WHERE user_id IN (SELECT pt.user_id FROM raw.points AS pt
                          WHERE pt.dataset_id = %(dataset_id)s
                            AND pt.t >= %(window_start)s::timestamptz
                            AND pt.t < %(window_end)s::timestamptz)) AS window_persons;
