-- The report's drawing of common origin/destination groups (seed 004 §4.3.3; issue 11):
-- each as the convex hull of its places (a closed neighbourhood on the place network),
-- its interval-filtered count n_lo as the weight. Published data only (od_groups, places).
-- Columns: wkb, weight, t_start, t_end (no time). places is a JSON array of place names.
-- Identifiers: release.
SELECT ST_AsBinary(ST_ConvexHull(ST_Collect(p.geom))) AS wkb,
       min(o.n_lo)::float8 AS weight, NULL::timestamptz AS t_start, NULL::timestamptz AS t_end
FROM {release}.od_groups AS o
CROSS JOIN LATERAL jsonb_array_elements_text(o.places) AS u(place_id)
JOIN {release}.places AS p ON p.place_id = u.place_id
GROUP BY o.od_group_id
ORDER BY min(o.n_lo), o.od_group_id;
