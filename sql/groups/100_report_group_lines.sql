-- The report's drawing of trajectory groups on the place network (issue 11): each published
-- group as the line through its places in order (one point for a group of one place), its
-- interval-filtered count n_lo as the weight. Published data only (groups, places).
-- Columns: wkb, weight, t_start, t_end (no time: a group covers the whole window).
-- places is a JSON array of place names. Identifiers: release.
SELECT ST_AsBinary(CASE WHEN count(*) >= 2
                        THEN ST_MakeLine(ST_PointOnSurface(p.geom) ORDER BY u.ord)
                        ELSE ST_PointOnSurface(ST_Collect(p.geom)) END) AS wkb,
       min(g.n_lo)::float8 AS weight, NULL::timestamptz AS t_start, NULL::timestamptz AS t_end
FROM {release}.groups AS g
CROSS JOIN LATERAL jsonb_array_elements_text(g.places) WITH ORDINALITY AS u(place_id, ord)
JOIN {release}.places AS p ON p.place_id = u.place_id
GROUP BY g.group_id
ORDER BY min(g.n_lo), g.group_id;
