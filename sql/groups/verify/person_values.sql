-- Verifier of trajectory groups (seed 004): every person's value of every demographic
-- attribute of the release's grid, read from raw.persons: the typed column of that name
-- (age, income; sex and education when they hold numbers), else the key of its attributes;
-- NULL when missing or not a number. (person, attr, value), one row per person and attribute.
-- Params: dataset_id, attributes (text[]).
DROP TABLE IF EXISTS pg_temp.tgv_values;
CREATE TEMP TABLE tgv_values ON COMMIT DROP AS
SELECT p.user_id AS person, a.attr,
       CASE a.attr WHEN 'age' THEN p.age::float8
                   WHEN 'income' THEN p.income::float8
                   ELSE CASE WHEN s.text ~ '^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$'
                             THEN s.text::float8 END END AS value
FROM raw.persons AS p
CROSS JOIN unnest(%(attributes)s::text[]) AS a(attr)
CROSS JOIN LATERAL (SELECT CASE a.attr WHEN 'sex' THEN p.sex
                                       WHEN 'education' THEN p.education
                                       ELSE p.attributes ->> a.attr END AS text) AS s
WHERE p.dataset_id = %(dataset_id)s;
CREATE INDEX ON tgv_values (person, attr);
ANALYZE tgv_values;
