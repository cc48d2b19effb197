-- Verifier of trajectory groups (seed 004): boundary hiding (§4.4.5) re-done from the
-- private class members (work schema, before publication) and their raw values. Per class
-- and attribute, a_low is the mean of the m = ceil(k/2) lowest member values and a_high of
-- the m highest; the published lo must be the start of the atomic interval holding a_low
-- (the last boundary at or below it), the published hi the end of the one holding a_high.
-- A mean within 1e-9 (relative) of a boundary may have been rounded to either side of it
-- by another summation order: both intervals are accepted there.
-- Returns the (class, attribute) pairs whose bounds are not the hidden ones: group_id,
-- class_id, attr, the published lo, hi and the expected ones.
-- Params: m. Identifiers: members (the private table).
WITH m AS (
    SELECT DISTINCT group_id, class_id, user_id FROM {members}
), ranked AS (
    SELECT m.group_id, m.class_id, v.attr, v.value,
           row_number() OVER (PARTITION BY m.group_id, m.class_id, v.attr
                              ORDER BY v.value) AS up,
           row_number() OVER (PARTITION BY m.group_id, m.class_id, v.attr
                              ORDER BY v.value DESC) AS down
    FROM m JOIN tgv_values AS v ON v.person = m.user_id
    WHERE v.value IS NOT NULL
), means AS (
    SELECT group_id, class_id, attr,
           avg(value) FILTER (WHERE up <= %(m)s) AS a_low,
           avg(value) FILTER (WHERE down <= %(m)s) AS a_high
    FROM ranked
    GROUP BY group_id, class_id, attr
), intervals AS (
    SELECT mn.group_id, mn.class_id, mn.attr, x.side, x.exact,
           coalesce((SELECT max(e.i) FROM tgv_edges AS e
                     WHERE e.attr = mn.attr AND e.i < e.bins AND e.value <= x.x), 0) AS cell
    FROM means AS mn
    CROSS JOIN LATERAL (VALUES
        ('low', mn.a_low - 1e-9 * greatest(1, abs(mn.a_low)), false),
        ('low', mn.a_low, true),
        ('low', mn.a_low + 1e-9 * greatest(1, abs(mn.a_low)), false),
        ('high', mn.a_high - 1e-9 * greatest(1, abs(mn.a_high)), false),
        ('high', mn.a_high, true),
        ('high', mn.a_high + 1e-9 * greatest(1, abs(mn.a_high)), false)) AS x(side, x, exact)
), expected AS (
    SELECT group_id, class_id, attr,
           array_agg(cell) FILTER (WHERE side = 'low') AS lo_cells,
           array_agg(cell + 1) FILTER (WHERE side = 'high') AS hi_ends,
           min(cell) FILTER (WHERE side = 'low' AND exact) AS lo_i,
           min(cell + 1) FILTER (WHERE side = 'high' AND exact) AS hi_i
    FROM intervals
    GROUP BY group_id, class_id, attr
)
SELECT b.group_id, b.class_id, b.attr, b.lo, b.hi, lo_edge.value AS expected_lo,
       hi_edge.value AS expected_hi
FROM expected AS x
JOIN tgv_boxes AS b USING (group_id, class_id, attr)
JOIN tgv_edges AS lo_edge ON lo_edge.attr = x.attr AND lo_edge.i = x.lo_i
JOIN tgv_edges AS hi_edge ON hi_edge.attr = x.attr AND hi_edge.i = x.hi_i
WHERE NOT coalesce(b.lo_i = ANY (x.lo_cells) AND b.hi_i = ANY (x.hi_ends), false)
ORDER BY b.group_id, b.class_id, b.attr;
