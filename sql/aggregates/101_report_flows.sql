-- The report's flow map of origin-destination counts: each published move between two
-- zones as the line between their centroids (a zone of zones_release: a point on its
-- surface), a stay as the zone's point; n_lo as the weight, over the bin the move ends in.
-- Published data only. Columns: wkb, weight, t_start, t_end. Identifiers: release.
SELECT ST_AsBinary(CASE WHEN c.origin_zone_id = c.destination_zone_id THEN b
                        ELSE ST_MakeLine(a, b) END) AS wkb,
       c.n_lo::float8 AS weight, c.bin_start AS t_start, c.bin_end AS t_end
FROM {release}.od_counts AS c
JOIN {release}.zones AS o ON o.zone_id = c.origin_zone_id
JOIN {release}.zones AS d ON d.zone_id = c.destination_zone_id
LEFT JOIN {release}.zone_centroids AS oc ON oc.zone_id = c.origin_zone_id
LEFT JOIN {release}.zone_centroids AS dc ON dc.zone_id = c.destination_zone_id
CROSS JOIN LATERAL (SELECT coalesce(oc.geom, ST_PointOnSurface(o.geom)) AS a,
                           coalesce(dc.geom, ST_PointOnSurface(d.geom)) AS b) AS p
ORDER BY c.n_lo, c.bin_start;
