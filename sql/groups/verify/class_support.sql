-- Verifier of trajectory groups (seed 004): per published demographic class, its count
-- interval, the distinct persons of its group (tgv_group_persons) whose values lie in its
-- box [lo, hi) in every attribute (inside), the fewest that lie in its interval of one
-- attribute (inside_each: the minimum over attributes), and the persons of its group.
-- Params: n_attributes. Identifiers: classes (the table under test).
WITH per_attribute AS (
    SELECT b.group_id, b.class_id, b.attr, gp.person
    FROM tgv_boxes AS b
    JOIN tgv_group_persons AS gp ON gp.group_id = b.group_id
    JOIN tgv_values AS v ON v.person = gp.person AND v.attr = b.attr
    WHERE v.value >= b.lo AND v.value < b.hi
), inside AS (
    SELECT group_id, class_id, count(*) AS n
    FROM (SELECT group_id, class_id, person FROM per_attribute
          GROUP BY group_id, class_id, person
          HAVING count(*) = %(n_attributes)s) AS everywhere
    GROUP BY group_id, class_id
), each_attribute AS (
    SELECT b.group_id, b.class_id, min(coalesce(p.n, 0)) AS n
    FROM tgv_boxes AS b
    LEFT JOIN (SELECT group_id, class_id, attr, count(*) AS n FROM per_attribute
               GROUP BY group_id, class_id, attr) AS p USING (group_id, class_id, attr)
    GROUP BY b.group_id, b.class_id
), group_persons AS (
    SELECT group_id, count(*) AS n FROM tgv_group_persons GROUP BY group_id
)
SELECT c.group_id, c.class_id, c.n_lo, c.n_hi, coalesce(i.n, 0) AS inside,
       coalesce(e.n, 0) AS inside_each, coalesce(g.n, 0) AS group_persons
FROM {classes} AS c
LEFT JOIN inside AS i USING (group_id, class_id)
LEFT JOIN each_attribute AS e USING (group_id, class_id)
LEFT JOIN group_persons AS g USING (group_id)
ORDER BY c.group_id, c.class_id;
