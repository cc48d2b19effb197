-- Verifier of trajectory groups (seed 004): the public atomic grid of the demographic
-- attributes (manifest parameter demographic_grid, §4.4.3): boundary i of an attribute is
-- lower + (upper - lower) * i / bins for i = 0 .. bins - 1, and exactly upper for i = bins.
-- Params: attributes (text[]), lowers, uppers (float8[]), bins (int[]), all in one order.
DROP TABLE IF EXISTS pg_temp.tgv_edges;
CREATE TEMP TABLE tgv_edges ON COMMIT DROP AS
SELECT a.attr, i.i, a.bins,
       CASE WHEN i.i = a.bins THEN a.upper
            ELSE a.lower + (a.upper - a.lower) * i.i / a.bins END AS value
FROM unnest(%(attributes)s::text[], %(lowers)s::float8[], %(uppers)s::float8[],
            %(bins)s::int[]) AS a(attr, lower, upper, bins)
CROSS JOIN LATERAL generate_series(0, a.bins) AS i(i);
ALTER TABLE tgv_edges ADD PRIMARY KEY (attr, i);
CREATE INDEX ON tgv_edges (attr, value);
ANALYZE tgv_edges;
