-- Verifier of trajectory groups (seed 004): per demographic class, its private members
-- (work schema, before publication) against the verifier's own persons of its group
-- (tgv_group_persons) and their values (tgv_values):
--   members         distinct members;
--   outside_group   members that are not persons of the class's group;
--   in_two_classes  members of another class of the same group as well;
--   missing_value   members without a value of some attribute.
-- A class that has members but is not published gives a row with published = false.
-- Params: n_attributes. Identifiers: classes (the table under test), members.
WITH m AS (
    SELECT DISTINCT group_id, class_id, user_id FROM {members}
), valued AS (
    SELECT person, count(value) AS n FROM tgv_values GROUP BY person
), flagged AS (
    SELECT m.group_id, m.class_id, m.user_id, gp.person IS NOT NULL AS of_group,
           count(*) OVER (PARTITION BY m.group_id, m.user_id) > 1 AS repeated,
           coalesce(v.n, 0) < %(n_attributes)s AS missing
    FROM m
    LEFT JOIN tgv_group_persons AS gp ON gp.group_id = m.group_id AND gp.person = m.user_id
    LEFT JOIN valued AS v ON v.person = m.user_id
)
SELECT group_id, class_id, c.n_lo IS NOT NULL AS published, c.n_lo, c.n_hi,
       count(f.user_id) AS members,
       count(f.user_id) FILTER (WHERE NOT f.of_group) AS outside_group,
       count(f.user_id) FILTER (WHERE f.repeated) AS in_two_classes,
       count(f.user_id) FILTER (WHERE f.missing) AS missing_value
FROM {classes} AS c
FULL JOIN flagged AS f USING (group_id, class_id)
GROUP BY group_id, class_id, c.n_lo, c.n_hi
ORDER BY group_id, class_id;
