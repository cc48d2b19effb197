-- Verifier of trajectory groups (seed 004): faults of the published demographic classes'
-- boxes (tgv_boxes, class_boxes.sql), as (fault, group_id, class_id):
--   unknown_group  the class's group is not published;
--   missing_bound  an attribute's bound is NULL;
--   off_grid       a bound is not a boundary of the public atomic grid (§4.4.3): it may be
--                  one person's value;
--   empty          lo is not below hi in some attribute;
--   overlapping    two classes of one group whose boxes intersect (classes partition a
--                  group's persons: a person in two boxes is counted twice).
-- Params: n_attributes. Identifiers: classes, groups (the tables under test).
SELECT 'unknown_group' AS fault, c.group_id, c.class_id
FROM {classes} AS c
WHERE NOT EXISTS (SELECT 1 FROM {groups} AS g WHERE g.group_id = c.group_id)
UNION ALL
SELECT DISTINCT 'missing_bound', group_id, class_id
FROM tgv_boxes WHERE lo IS NULL OR hi IS NULL
UNION ALL
SELECT DISTINCT 'off_grid', group_id, class_id
FROM tgv_boxes WHERE (lo IS NOT NULL AND lo_i IS NULL) OR (hi IS NOT NULL AND hi_i IS NULL)
UNION ALL
SELECT DISTINCT 'empty', group_id, class_id
FROM tgv_boxes WHERE NOT lo < hi
UNION ALL
SELECT 'overlapping', a.group_id, a.class_id
FROM tgv_boxes AS a
JOIN tgv_boxes AS b
  ON b.group_id = a.group_id AND b.attr = a.attr AND b.class_id <> a.class_id
GROUP BY a.group_id, a.class_id, b.class_id
HAVING count(*) = %(n_attributes)s AND bool_and(a.lo < b.hi AND b.lo < a.hi)
ORDER BY 1, 2, 3;
