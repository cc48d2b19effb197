-- Trajectory groups (seed 004): every value of a demographic attribute of every person of
-- the window, for the demographic anonymizer: one row per person and attribute
-- (person_index, attribute: the attribute's position in attributes, from 1; value: NULL
-- where unknown), ordered by both. An attribute is a raw.persons column (age, income) or a
-- key of its attributes jsonb (a column wins over a key of the same name); a non-numeric
-- value of attributes is unknown, never a failed cast.
-- Params: dataset_id, attributes (text[]: the grid's attribute names). Identifiers: work.
COPY (
    SELECT t.person_index, a.attribute,
           CASE a.name WHEN 'age' THEN p.age::float8
                       WHEN 'income' THEN p.income::float8
                       ELSE CASE WHEN jsonb_typeof(p.attributes -> a.name) = 'number'
                                 THEN (p.attributes ->> a.name)::float8 END END AS value
    FROM (SELECT DISTINCT person_index, user_id FROM {work}.tg_trajectories) AS t
    CROSS JOIN unnest(%(attributes)s::text[]) WITH ORDINALITY AS a(name, attribute)
    LEFT JOIN raw.persons AS p ON p.dataset_id = %(dataset_id)s AND p.user_id = t.user_id
    ORDER BY 1, 2
) TO STDOUT (FORMAT csv)
