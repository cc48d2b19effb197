-- Shape faults of a clustering release's group_regions (the verifier's own reading):
-- rectangles that are not axis-parallel boxes of positive area, edges off the lattice
-- (privacy rule 2), t_start <> t_end (faults where a method publishes instants, TCAA),
-- t_end <= t_start (faults where it publishes intervals, MLA), groups without a region,
-- and groups whose time points repeat (faults for instants).
-- Params: snap (metres, the lattice). Identifiers: release (the schema under test).
WITH r AS (
    SELECT group_id, seq, t_start, t_end, geom,
           ST_XMin(geom) AS x0, ST_YMin(geom) AS y0, ST_XMax(geom) AS x1, ST_YMax(geom) AS y1
    FROM {release}.group_regions
)
SELECT (SELECT count(*) FROM r
        WHERE ST_NPoints(geom) <> 5 OR NOT ST_Equals(geom, ST_Envelope(geom))
           OR x1 <= x0 OR y1 <= y0) AS not_rectangles,
       (SELECT count(*) FROM r, unnest(ARRAY[x0, y0, x1, y1]) AS edge
        WHERE abs(edge / %(snap)s::float8 - round(edge / %(snap)s::float8))
              * %(snap)s::float8 > 1e-6) AS edges_off_lattice,
       (SELECT count(*) FROM r WHERE t_start IS DISTINCT FROM t_end) AS not_instants,
       (SELECT count(*) FROM r WHERE NOT t_end > t_start) AS empty_intervals,
       (SELECT count(*) FROM {release}.groups AS g
        WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.group_id = g.group_id)) AS groups_without_regions,
       (SELECT count(*) FROM (SELECT group_id, t_start FROM r GROUP BY group_id, t_start
                              HAVING count(*) > 1) AS d) AS repeated_times
