-- Verifier of trajectory groups (seed 004): every person's value of every demographic
-- attribute of the release's grid, read from raw.persons as the anonymizer's definition
-- says (docs: trajectory groups, demographics): the typed column age or income, else a JSON
-- number under the attribute's key of attributes; NULL when missing or not a number.
-- (person, attr, value), one row per person and attribute.
-- Params: dataset_id, attributes (text[]).
DROP TABLE IF EXISTS pg_temp.tgv_values;
CREATE TEMP TABLE tgv_values ON COMMIT DROP AS
SELECT p.user_id AS person, a.attr,
       CASE a.attr WHEN 'age' THEN p.age::float8
                   WHEN 'income' THEN p.income::float8
                   ELSE CASE WHEN jsonb_typeof(p.attributes -> a.attr) = 'number'
                             THEN (p.attributes ->> a.attr)::float8 END END AS value
FROM raw.persons AS p
CROSS JOIN unnest(%(attributes)s::text[]) AS a(attr)
WHERE p.dataset_id = %(dataset_id)s;
CREATE INDEX ON tgv_values (person, attr);
ANALYZE tgv_values;
