-- Verifier of trajectory groups (seed 004): every published demographic class as one row
-- per attribute, its bounds [lo, hi) read by column name (<attr>_lo, <attr>_hi) through
-- to_jsonb (floats survive it exactly), and the atomic boundary numbers they are
-- (lo_i, hi_i: NULL when a bound is no boundary of the grid, within 1e-9 relative).
-- Params: attributes (text[]). Identifiers: classes (the table under test).
DROP TABLE IF EXISTS pg_temp.tgv_boxes;
CREATE TEMP TABLE tgv_boxes ON COMMIT DROP AS
SELECT b.*,
       (SELECT e.i FROM tgv_edges AS e
        WHERE e.attr = b.attr AND abs(e.value - b.lo) <= 1e-9 * greatest(1, abs(e.value))
        ORDER BY abs(e.value - b.lo) LIMIT 1) AS lo_i,
       (SELECT e.i FROM tgv_edges AS e
        WHERE e.attr = b.attr AND abs(e.value - b.hi) <= 1e-9 * greatest(1, abs(e.value))
        ORDER BY abs(e.value - b.hi) LIMIT 1) AS hi_i
FROM (SELECT c.group_id, c.class_id, a.attr,
             (j.row ->> (a.attr || '_lo'))::float8 AS lo,
             (j.row ->> (a.attr || '_hi'))::float8 AS hi
      FROM {classes} AS c
      CROSS JOIN LATERAL to_jsonb(c) AS j(row)
      CROSS JOIN unnest(%(attributes)s::text[]) AS a(attr)) AS b;
CREATE INDEX ON tgv_boxes (group_id, class_id);
ANALYZE tgv_boxes;
